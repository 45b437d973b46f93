import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged } from '../../bin/child-process.js';
import { covers, FEATURE_CALLS, featuresOf } from '../../driver/k8s/api-rights.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import {
  createHelm,
  expandArgs,
  parseManifests,
  podContainer,
  RENDER_KUBE_VERSION,
  type Helm,
  type Manifest,
} from '../support/helm.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { requirePeer } from '../support/peers.js';
import { auditedCalls, boundIdentity, type BoundIdentity, type ClusterRoleManifest } from '../support/rbac-identity.js';
import {
  createPodWithVolumes,
  ensureCsiDriverLikeUpstreamHelm,
  kubeletTokens,
  podEvents,
  TEST_AUDIENCE,
} from '../support/rbac-scenario.js';

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

/** Upstream's values for rotation with token audiences: its chart then sets requiresRepublish and grants no token requests. */
const UPSTREAM_VALUES = {
  syncSecret: { enabled: true },
  enableSecretRotation: true,
  rotationPollInterval: '1s',
  tokenRequests: [{ audience: TEST_AUDIENCE }],
};

/** The ClusterRoles upstream's chart binds to its driver's ServiceAccount. */
function driverRoles(rendered: readonly Manifest[]): ClusterRoleManifest[] {
  const bound = rendered
    .filter((o) => o.kind === 'ClusterRoleBinding')
    .filter((b) => (b['subjects'] as { name: string }[]).some((s) => s.name === 'secrets-store-csi-driver'))
    .map((b) => b['roleRef'].name as string);
  return rendered.filter((o) => o.kind === 'ClusterRole' && bound.includes(o.metadata?.name ?? ''));
}

/** The rendered driver flags, less those naming sockets, the node and the metrics address (the test stack sets its own). */
function featureArgs(rendered: readonly Manifest[]): string[] {
  const ds = rendered.find((o) => o.kind === 'DaemonSet');
  if (!ds) throw new Error("upstream's chart rendered no DaemonSet");
  const own = /^--(endpoint|nodeid|provider-volume|additional-provider-volume-paths|metrics-addr)=/;
  return expandArgs(podContainer(ds, 'secrets-store'), { KUBE_NODE_NAME: 'test-node' }).filter((a) => !own.test(a));
}

describe("upstream v1.6.1's chart with enableSecretRotation and tokenRequests: our driver with its rendered flags and roles picks kubelet's republish itself (real helm, real kube-apiserver)", function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let helm: Helm;
  let rendered: Manifest[];
  let identity: BoundIdentity;
  let stack: DriverStack;
  let ns: string;
  let request: NodePublishVolumeRequest;
  const target = () => stack.targetPath('up');

  /** Republishes as kubelet does (its cadence shortened) until one runs as a rotation (the interval passed). */
  async function republishUntilRotated(): Promise<void> {
    const ran = () => countLogged(stack.driver, /"message":"volume published".*"origin":"rotation"/);
    const before = ran();
    for (let calls = 0; ran() === before; calls++) {
      if (calls === 200) throw new Error('200 republishes and no rotation ran');
      await stack.client.publish(request);
      if (ran() === before) await new Promise((r) => setTimeout(r, 100));
    }
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    helm = createHelm();
    const chart = requirePeer('UPSTREAM_CHART');
    const values = helm.valuesFile(UPSTREAM_VALUES);
    const args = ['template', 'csi-secrets-store', chart, '--namespace', 'kube-system', '-f', values];
    rendered = parseManifests((await helm.run([...args, '--kube-version', RENDER_KUBE_VERSION])).stdout);
    ns = await createNamespace(cluster, 'upstream-helm-rotation');
    await ensureCsiDriverLikeUpstreamHelm(cluster);
    await createSecretProviderClass(cluster, ns, 'up', {
      provider: 'file',
      parameters: { objects: '- objectName: a\n' },
    });
    identity = await boundIdentity(cluster, 'upstream-helm', driverRoles(rendered));
    stack = await startDriverStack({
      kubeconfig: identity.kubeconfig,
      providerFiles: { a: 'a1' },
      driverArgs: featureArgs(rendered),
    });
    const uid = await createPodWithVolumes(cluster, ns, 'app', ['up']);
    const plain = stack.request(target(), 'up', 'app', ns, uid);
    const tokens = await kubeletTokens(cluster, ns, 'app', uid);
    request = { ...plain, volume_context: { ...plain.volume_context, [TOKENS_KEY]: tokens } };
    await stack.client.publish(request);
  });
  after(async () => {
    await stack?.stop();
    await identity?.remove();
    helm?.cleanup();
  });

  it("renders what the issue is about: requiresRepublish and tokenRequests, --enable-secret-rotation=true, no token right in the driver's roles", () => {
    const csiDriver = rendered.find((o) => o.kind === 'CSIDriver');
    expect(csiDriver?.['spec'].requiresRepublish).to.equal(true);
    expect(csiDriver?.['spec'].tokenRequests).to.deep.equal([{ audience: TEST_AUDIENCE }]);
    expect(featureArgs(rendered)).to.include.members(['--enable-secret-rotation=true', '--rotation-poll-interval=1s']);
    expect(featureArgs(rendered).some((a) => a.startsWith('--rotation-mode'))).to.equal(false);
    expect(JSON.stringify(driverRoles(rendered))).to.not.include('serviceaccounts/token');
  });

  it('logs one warning at start naming the missing right and the mode taken, and runs no reconciler', () => {
    const warnings = stack.driver
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"level":"warn"') && l.includes('serviceaccounts/token'));
    expect(warnings).to.have.length(1);
    expect(warnings[0])
      .to.include("the driver's RBAC lacks: create serviceaccounts/token")
      .and.include("rotating on kubelet's republish")
      .and.include('requiresRepublish: true');
    expect(stack.driver.stderr()).to.include('rotation on kubelet republish started');
    expect(stack.driver.stderr()).to.not.include('rotation reconciler started');
  });

  it('kubelet republishes rotate the content, interval after interval, with no MountRotationFailed and no 403', async () => {
    for (const version of ['a2', 'a3', 'a4']) {
      await writeFile(join(stack.providerRoot, 'a'), version);
      await republishUntilRotated();
      expect(await readFile(join(target(), 'a'), 'utf8')).to.equal(version);
    }
    const events = await podEvents(cluster, ns, 'app');
    expect(events.filter((e) => e.startsWith('Normal MountRotationComplete:'))).to.have.length(3);
    expect(events.filter((e) => e.includes('MountRotationFailed'))).to.deep.equal([]);
    expect(stack.driver.stderr()).to.not.include('HTTP 403');
  });

  it('every API call is one the republish features list, none refused, no token request (the audit log)', async () => {
    const calls = await auditedCalls(cluster, identity.user);
    expect(calls.filter((c) => c.code === 403)).to.deep.equal([]);
    const listed = featuresOf({
      enableSecretSync: true,
      enableSecretRotation: true,
      rotationMode: 'republish',
    }).flatMap((f) => FEATURE_CALLS[f]);
    expect(calls.filter((c) => !listed.some((r) => covers(r, c)))).to.deep.equal([]);
    expect(calls.filter((c) => c.resource === 'serviceaccounts/token')).to.deep.equal([]);
  });
});
