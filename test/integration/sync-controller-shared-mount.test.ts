import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, SECRETS_STORE_GROUP } from '../support/kube-objects.js';
import {
  createSecretSync,
  installSyncControllerManifests,
  metricSum,
  SECRET_SYNC_RESOURCE,
  fileProvider,
  startSyncControllerWith,
  SYNC_CONTROLLER_USER,
  type SyncControllerStack,
} from '../support/sync-controller.js';
import { auditedCalls } from '../support/rbac-identity.js';
import { until } from '../support/until.js';

// One provider Mount per group of SecretSyncs with the identical Mount request (namespace,
// class, service account, tokens), counted by the controller's
// secretsync_provider_mount_total against a real kube-apiserver and the file provider.
// The file provider serves under its own name here: SecretSyncs that other tests left in
// this apiserver (their classes name "file") are not counted.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SS = SECRET_SYNC_RESOURCE;
const PROVIDER = 'counted';

describe('sync controller: one provider Mount per group of identical requests (real kube-apiserver, file provider)', function () {
  this.timeout(240_000);
  let cluster: KubeCluster;
  let stack: SyncControllerStack | undefined;
  let ns: string;

  /** 10 on c1 and 10 on c2 with SA default; 4 on c1 with SA other: three groups. */
  const syncs = [
    ...Array.from({ length: 10 }, (_, i) => ({ name: `c1-${i}`, cls: 'c1', sa: 'default' })),
    ...Array.from({ length: 10 }, (_, i) => ({ name: `c2-${i}`, cls: 'c2', sa: 'default' })),
    ...Array.from({ length: 4 }, (_, i) => ({ name: `other-${i}`, cls: 'c1', sa: 'other' })),
  ];
  const objects = (sourcePath: string) => JSON.stringify([{ objectName: 'password', sourcePath }]);
  const secretText = async (name: string) => {
    const secret = await cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
    return Buffer.from(secret.data?.['pw'] ?? '', 'base64').toString();
  };
  /** Mount calls made, and reconciles answered by a call made for another. */
  const counts = async (s: SyncControllerStack) => {
    const m = await s.metrics();
    const provider = `provider="${PROVIDER}"`;
    return {
      calls: metricSum(m, 'secretsync_provider_mount_total', [provider]),
      shared: metricSum(m, 'secretsync_provider_mount_shared_total', [provider]),
    };
  };
  /** Waits until `answered` reconciles of ours reached the provider (called or shared). */
  const untilAnswered = async (s: SyncControllerStack, answered: number) =>
    (
      await until(`${answered} reconciles answered`, async () => {
        const c = await counts(s);
        return c.calls + c.shared >= answered ? c : undefined;
      })
    ).value;
  const createSync = (name: string, cls: string, sa: string) =>
    createSecretSync(cluster, ns, name, {
      secretProviderClassName: cls,
      serviceAccountName: sa,
      secretObject: { data: [{ sourcePath: 'password', targetKey: 'pw' }] },
    });
  const start = (args: readonly string[] = []) =>
    startSyncControllerWith(
      cluster,
      [fileProvider({ a: 'a1', b: 'b1' }, PROVIDER)],
      ['--rotation-poll-interval=0', '--token-request-audience=aud-a', ...args],
    );

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'secretsync-shared');
    await cluster.admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'other' } } });
    await createSecretProviderClass(cluster, ns, 'c1', { provider: PROVIDER, parameters: { objects: objects('a') } });
    await createSecretProviderClass(cluster, ns, 'c2', { provider: PROVIDER, parameters: { objects: objects('b') } });
    // All exist before the controller starts: its first lists queue them as one round.
    for (const { name, cls, sa } of syncs) await createSync(name, cls, sa);
  });

  after(async () => {
    await stack?.stop();
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('first sync of 24 SecretSyncs over 2 classes and 2 service accounts: 3 Mount calls, every Secret written', async () => {
    stack = await start();
    await untilAnswered(stack, syncs.length);
    for (const { name, cls } of syncs)
      await until(
        `Secret ${name}`,
        async () => (await secretText(name).catch(() => '')) === `${cls === 'c1' ? 'a' : 'b'}1`,
      );
    // One reconcile each: the watch event of a reconcile's own write, also when it comes
    // before the write's answer, wakes nothing.
    expect(await counts(stack)).to.deep.equal({ calls: 3, shared: 21 });
    // Concurrent reconciles of a group wait for one TokenRequest: their tokens, and so their requests, are equal.
    const { value: minted } = await until('TokenRequests in the audit log', async () => {
      const calls = (await auditedCalls(cluster, SYNC_CONTROLLER_USER)).filter(
        (call) => call.resource === 'serviceaccounts/token' && call.namespace === ns,
      );
      return calls.length >= 2 ? calls : undefined;
    });
    expect(minted.map((call) => `${call.name ?? ''} ${call.code}`).sort()).to.deep.equal(['default 201', 'other 201']);
  });

  it("a refresh of class c1 re-fetches once per service account of it, not for c2's", async () => {
    if (!stack) throw new Error('no controller');
    const before = await counts(stack);
    await writeFile(join(stack.providerRoot, 'a'), 'a2');
    await cluster.admin.custom.patchNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'c1',
      body: [
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'secrets-store.csi.k8s.io/refresh-requested-at': '2026-01-01T00:00:00Z' },
        },
      ],
    });
    const after = await untilAnswered(stack, before.calls + before.shared + 14);
    expect(after.calls - before.calls).to.equal(2);
    for (const { name } of syncs.filter((s) => s.cls === 'c1'))
      await until(`Secret ${name} refreshed`, async () => (await secretText(name)) === 'a2');
    expect(await secretText('c2-0')).to.equal('b1');
    expect((await counts(stack)).calls).to.equal(after.calls);
  });

  it('a spec change (forceSynchronization) right after the round gets fresh data, not the round’s answer', async () => {
    if (!stack) throw new Error('no controller');
    const before = await counts(stack);
    await writeFile(join(stack.providerRoot, 'a'), 'a3');
    await cluster.admin.custom.patchNamespacedCustomObject({
      ...SS,
      namespace: ns,
      name: 'c1-0',
      body: [{ op: 'add', path: '/spec/forceSynchronization', value: '1' }],
    });
    await until('Secret c1-0 re-fetched', async () => (await secretText('c1-0')) === 'a3');
    expect((await counts(stack)).calls).to.equal(before.calls + 1);
    expect(await secretText('c1-1')).to.equal('a2');
  });

  it('--share-provider-mounts=false: one Mount per SecretSync, as upstream', async () => {
    await stack?.stop();
    stack = await start(['--share-provider-mounts=false']);
    const c = await untilAnswered(stack, syncs.length);
    expect(c.shared).to.equal(0);
    expect(c.calls).to.equal(syncs.length);
  });

  it('polls go by group: five SecretSyncs of a class polled every second share one Mount per round', async () => {
    await stack?.stop();
    stack = await start();
    await untilAnswered(stack, syncs.length);
    await createSecretProviderClass(
      cluster,
      ns,
      'polled',
      { provider: PROVIDER, parameters: { objects: objects('b') } },
      { 'secrets-store.csi.k8s.io/rotation-poll-interval': '1s' },
    );
    for (let i = 0; i < 5; i++) await createSync(`polled-${i}`, 'polled', 'default');
    for (let i = 0; i < 5; i++)
      await until(`Secret polled-${i}`, async () => (await secretText(`polled-${i}`).catch(() => '')) === 'b1');
    const before = await counts(stack);
    const after = await untilAnswered(stack, before.calls + before.shared + 15);
    // Three rounds of five: a call each (four when the count began mid-round). A poll
    // timer per SecretSync (± 10% each) would make a call per poll: 15.
    expect(after.calls - before.calls).to.be.at.most(4);
  });
});
