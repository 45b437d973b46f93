// What every provider DaemonSet in deploy/ and the chart must get right, whatever the
// provider: its socket where the driver looks, the init container that prepares it,
// an unprivileged non-root container without an API token, probes on its health port,
// and a selector of its own. Each provider's check (test/support/<name>-provider-daemonset.ts)
// adds what is its own.
import { expect } from 'chai';
import { basename, posix } from 'node:path';
import { DRIVER_FLAGS } from '../../driver/config.js';
import { parseFlags, stringFlag, type ParsedFlags } from '../../lib/flags.js';
import { socketPathFromEndpoint } from '../../lib/grpc/unix-socket.js';
import { container, hostPathOf as hostPath, type Obj } from './deploy-manifests.js';

/** The provider's socket (`--endpoint`) is `<name>.sock` in the driver's --provider-volume, prepared by the init container. */
export function checkProviderSocket(ds: Obj, driverDs: Obj, flags: ParsedFlags, name: string): void {
  const c = container(ds, 'provider');
  const socket = socketPathFromEndpoint(stringFlag(flags, 'endpoint'));
  expect(basename(socket)).to.equal(`${name}.sock`);
  const driver = container(driverDs, 'secrets-store');
  const providerVolume = stringFlag(
    parseFlags(
      (driver['args'] as string[]).map((a) => a.replace('$(KUBE_NODE_NAME)', 'n')),
      DRIVER_FLAGS,
    ),
    'provider-volume',
  );
  expect(posix.dirname(hostPath(ds, c, socket)), "socket directory = the driver's --provider-volume").to.equal(
    hostPath(driverDs, driver, providerVolume),
  );
  const init = container(ds, 'prepare-host-dirs', true);
  expect(hostPath(ds, init, '/provider')).to.equal(posix.dirname(hostPath(ds, c, socket)));
  expect((init['command'] as string[]).join(' ')).to.include(`rm -f /provider/${name}.sock`);
  expect(init['securityContext']?.capabilities).to.deep.equal({ drop: ['ALL'], add: ['CHOWN', 'FOWNER'] });
}

/** Non-root uid 65532, read-only root, no privilege or capability, no API token, with resources. */
export function checkUnprivileged(ds: Obj): void {
  const c = container(ds, 'provider');
  const pod = ds['spec'].template.spec as Obj;
  const sc = c['securityContext'] as Obj;
  expect([
    sc['runAsNonRoot'],
    sc['runAsUser'],
    sc['readOnlyRootFilesystem'],
    sc['allowPrivilegeEscalation'],
  ]).to.deep.equal([true, 65532, true, false]);
  expect(sc['privileged']).to.not.equal(true);
  expect(sc['capabilities']).to.deep.equal({ drop: ['ALL'] });
  expect(pod['automountServiceAccountToken'], 'no API token').to.equal(false);
  expect(c['resources']?.requests).to.be.an('object');
  expect(c['resources']?.limits).to.be.an('object');
}

/** Liveness and readiness probes GET /healthz on `port`; the pods have a selector the driver DaemonSet does not match. */
export function checkProbesAndSelector(ds: Obj, driverDs: Obj, port: number): void {
  const c = container(ds, 'provider');
  const ports = new Map(((c['ports'] ?? []) as Obj[]).map((p) => [p['name'], p['containerPort']]));
  for (const probe of ['livenessProbe', 'readinessProbe']) {
    expect(c[probe]?.httpGet?.path, probe).to.equal('/healthz');
    expect(ports.get(c[probe].httpGet.port), probe).to.equal(port);
  }
  // Its own selector: the driver DaemonSet must not adopt provider pods.
  const podLabels = ds['spec'].template.metadata.labels as Record<string, string>;
  const driverSelector = driverDs['spec'].selector.matchLabels as Record<string, string>;
  expect(Object.entries(driverSelector).every(([k, v]) => podLabels[k] === v)).to.equal(false);
}

/** The port of a `--health-addr` such as `:8080`. */
export function healthPortOf(flags: ParsedFlags): number {
  return Number(stringFlag(flags, 'health-addr').split(':').pop());
}
