import { expect } from 'chai';
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { statusOf, until } from '../support/until.js';

// Secret sync is on by default, as upstream; a deleted synced
// Secret comes back from the mounted files while a pod still mounts the class, within
// the re-sync interval without rotation and within a rotation interval with it, without
// a provider call or a file write, also after a driver restart.

const RESYNC_MS = 2000;

/** Creates the class `name` (scripted provider) syncing file `token` into Secret `<name>-secret`, and a pod on test-node. */
async function classAndPod(cluster: KubeCluster, ns: string, name: string): Promise<string> {
  await createSecretProviderClass(cluster, ns, name, {
    provider: 'scripted',
    secretObjects: [{ secretName: `${name}-secret`, type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] }],
  });
  const pod = await cluster.admin.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: `${name}-pod` },
      spec: {
        nodeName: 'test-node',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [
          { name: 'v', csi: { driver: 'secrets-store.csi.k8s.io', volumeAttributes: { secretProviderClass: name } } },
        ],
      },
    },
  });
  return pod.metadata?.uid ?? '';
}

async function secretToken(cluster: KubeCluster, ns: string, name: string): Promise<string | undefined> {
  try {
    const s = await cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
    return Buffer.from(s.data?.['token'] ?? '', 'base64').toString();
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

describe('Secret sync by default, and deleted Secrets re-created without rotation (real kube-apiserver)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ScriptedProvider;
  let ns: string;
  let uid: string;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'resync');
    uid = await classAndPod(cluster, ns, 'app');
    // Upstream's DaemonSet args: no --enable-secret-sync at all.
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: [`--secret-resync-interval=${RESYNC_MS / 1000}s`],
    });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'token', contents: 't1' }]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  it('syncs secretObjects without --enable-secret-sync (on by default, as upstream)', async () => {
    await stack.client.publish(stack.request(stack.targetPath('app'), 'app', 'app-pod', ns, uid));
    expect(await secretToken(cluster, ns, 'app-secret')).to.equal('t1');
  });

  it('re-creates a deleted Secret from the mounted files within the re-sync interval, without calling the provider or rewriting files', async () => {
    const target = stack.targetPath('app');
    const data = await readlink(join(target, '..data'));
    const calls = provider.requests.length;
    const recreated = count(stack.driver, /"message":"Secret re-created from the mounted files"/);
    await cluster.admin.core.deleteNamespacedSecret({ name: 'app-secret', namespace: ns });
    const { ms } = await until('the Secret to come back', () => secretToken(cluster, ns, 'app-secret'), 30_000);
    expect(ms, 'back within one re-sync interval (plus a round)').to.be.below(2 * RESYNC_MS + 2000);
    expect(await secretToken(cluster, ns, 'app-secret')).to.equal('t1');
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'app-secret', namespace: ns });
    expect(secret.metadata?.labels).to.include({ 'secrets-store.csi.k8s.io/managed': 'true' });
    expect(secret.metadata?.ownerReferences?.map((o) => o.kind)).to.deep.equal(['SecretProviderClassPodStatus']);
    await logged(stack.driver, /"message":"Secret re-created from the mounted files"/, recreated + 1);
    expect(provider.requests.length, 'no provider call').to.equal(calls);
    expect(await readlink(join(target, '..data')), 'no file write').to.equal(data);
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('t1');
  });

  it('still knows the mounted volumes after a driver restart (from the pod status objects)', async () => {
    await stack.driver.stop();
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: [`--secret-resync-interval=${RESYNC_MS / 1000}s`],
      reuse: stack,
    });
    const calls = provider.requests.length;
    await cluster.admin.core.deleteNamespacedSecret({ name: 'app-secret', namespace: ns });
    await until('the Secret to come back after the restart', () => secretToken(cluster, ns, 'app-secret'), 30_000);
    expect(provider.requests.length, 'no provider call').to.equal(calls);
  });

  it('leaves the Secret deleted once the volume is unpublished', async () => {
    await stack.client.unpublish('vol-app-pod', stack.targetPath('app'));
    await cluster.admin.core.deleteNamespacedSecret({ name: 'app-secret', namespace: ns });
    const round = /"message":"secret resync round done"/;
    await logged(stack.driver, round, count(stack.driver, round) + 2);
    expect(await secretToken(cluster, ns, 'app-secret')).to.equal(undefined);
  });

  it('--enable-secret-sync=false: no Secret, a Warning SecretSyncDisabled on the pod', async () => {
    await stack.driver.stop();
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-sync=false'],
      reuse: stack,
    });
    const offUid = await classAndPod(cluster, ns, 'off');
    await stack.client.publish(stack.request(stack.targetPath('off'), 'off', 'off-pod', ns, offUid));
    expect(await readFile(join(stack.targetPath('off'), 'token'), 'utf8')).to.equal('t1');
    expect(await secretToken(cluster, ns, 'off-secret')).to.equal(undefined);
    const events = (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.reason === 'SecretSyncDisabled',
    );
    expect(events.map((e) => `${e.type} ${e.involvedObject.name}: ${e.message}`)).to.deep.equal([
      `Warning off-pod: SecretProviderClass ${ns}/off lists secretObjects but the driver runs with --enable-secret-sync=false; no Secret was created`,
    ]);
    await stack.client.unpublish('vol-off-pod', stack.targetPath('off'));
  });
});

describe('deleted Secrets re-created within a rotation interval (real kube-apiserver, rotation on)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ScriptedProvider;
  let ns: string;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'resync-rot');
    // The re-sync interval stays at its 5m default: only the rotation interval can bring it back in time.
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
    });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'token', contents: 'r1' }]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  it('brings the Secret back within one rotation interval, with no file write (content unchanged)', async () => {
    const uid = await classAndPod(cluster, ns, 'rot');
    const target = stack.targetPath('rot');
    await stack.client.publish(stack.request(target, 'rot', 'rot-pod', ns, uid));
    const data = await readlink(join(target, '..data'));
    await cluster.admin.core.deleteNamespacedSecret({ name: 'rot-secret', namespace: ns });
    const { ms } = await until('the Secret to come back', () => secretToken(cluster, ns, 'rot-secret'), 30_000);
    expect(ms, 'back within a rotation interval (plus a round)').to.be.below(2 * 1000 + 2000);
    expect(await secretToken(cluster, ns, 'rot-secret')).to.equal('r1');
    expect(await readlink(join(target, '..data')), 'no file write').to.equal(data);
    await stack.client.unpublish('vol-rot-pod', target);
  });
});
