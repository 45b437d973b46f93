// What a pki provider DaemonSet must get right, checked the same way for deploy/'s file
// (test/repo/deploy-exec-pki.test.ts) and the chart's rendering (helm-chart-render): its
// args parse with the provider's flag table, its socket lands in the driver's
// --provider-volume, and it holds nothing but that socket: no Secret, no token, no host
// directory besides the socket's, unprivileged and non-root.
import { expect } from 'chai';
import { posix } from 'node:path';
import {
  checkProbesAndSelector,
  checkProviderSocket,
  checkUnprivileged,
  healthPortOf,
} from './provider-daemonset-checks.js';
import { container, type Obj } from './deploy-manifests.js';
import { parseGoDuration } from '../../lib/duration.js';
import { parseFlags, stringFlag, type ParsedFlags } from '../../lib/flags.js';
import { socketPathFromEndpoint } from '../../lib/grpc/unix-socket.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { pkiProviderFlags, pkiSettings } from '../../providers/pki/settings.js';

/** The provider's name: the first argument of the image's `cli.js provider` entrypoint. */
export const PKI_PROVIDER_NAME = 'pki';

/** What the DaemonSet was rendered or written for. */
export interface PkiDaemonSetExpectation {
  /** --min-duration, a Go duration. */
  readonly minDuration: string;
  readonly healthPort: number;
}

/** The provider's parsed flags (throws as the provider would at start on an unknown flag). */
export function pkiProviderArgs(ds: Obj): ParsedFlags {
  const [name, ...rest] = container(ds, 'provider')['args'] as string[];
  expect(name, 'the provider name').to.equal(PKI_PROVIDER_NAME);
  const flags = parseFlags(rest, { ...commonProviderFlags(PKI_PROVIDER_NAME), ...pkiProviderFlags });
  expect(flags.positionals).to.deep.equal([]);
  expect([...flags.ignoredGiven], 'no ignored flags').to.deep.equal([]);
  return flags;
}

/**
 * Asserts everything a pki provider DaemonSet must get right next to `driverDs`: flags the
 * provider accepts with the expected values, its socket in the driver's --provider-volume,
 * no volume but the socket directory, unprivileged and non-root without an API token,
 * probes on --health-addr, and a selector of its own.
 */
export function checkPkiProviderDaemonSet(ds: Obj, driverDs: Obj, want: PkiDaemonSetExpectation): void {
  const c = container(ds, 'provider');
  const flags = pkiProviderArgs(ds);
  expect(pkiSettings(flags).minDurationSeconds, '--min-duration as the provider reads it').to.equal(
    parseGoDuration(want.minDuration) / 1000,
  );

  checkProviderSocket(ds, driverDs, flags, PKI_PROVIDER_NAME);

  // The CA arrives with each Mount: the pod holds no Secret and no other host directory.
  const pod = ds['spec'].template.spec as Obj;
  const volumes = (pod['volumes'] ?? []) as Obj[];
  const socket = socketPathFromEndpoint(stringFlag(flags, 'endpoint'));
  const socketVolume = (c['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === posix.dirname(socket))?.['name'];
  for (const v of volumes) {
    expect(v['secret'], `volume ${v['name']}: no Secret`).to.equal(undefined);
    if (v['hostPath'])
      expect(v['name'], `volume ${v['name']}: the only host directory is the socket's`).to.equal(socketVolume);
  }
  checkUnprivileged(ds);
  expect(pod['hostNetwork']).to.not.equal(true);
  expect(pod['nodeSelector']?.['kubernetes.io/os']).to.equal('linux');

  const port = healthPortOf(flags);
  expect(port, '--health-addr port').to.equal(want.healthPort);
  checkProbesAndSelector(ds, driverDs, port);
}
