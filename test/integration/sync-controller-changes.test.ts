import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startControllerManager,
  untilGarbageCollectorWorks,
  type ControllerManager,
} from '../support/controller-manager.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, SECRETS_STORE_GROUP } from '../support/kube-objects.js';
import {
  createSecretSync,
  installSyncControllerManifests,
  SECRET_SYNC_RESOURCE,
  type SecretSyncCondition,
  startSyncControllerStack,
  type SyncControllerStack,
} from '../support/sync-controller.js';
import { statusOf, until } from '../support/until.js';

// The SecretSync controller with polling off (--rotation-poll-interval=0): what a change
// of the class brings about, the conditions of provider-side failures, and the real
// garbage collector deleting the Secret of a deleted SecretSync.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SS = SECRET_SYNC_RESOURCE;

type Condition = SecretSyncCondition;

describe('sync controller: class changes, provider failures, garbage collection (polling off)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: SyncControllerStack;
  let manager: ControllerManager | undefined;
  let ns: string;

  const objects = (sourcePath: string) => JSON.stringify([{ objectName: 'password', sourcePath }]);
  const createSync = (name: string, className: string, sourcePath = 'password') =>
    createSecretSync(cluster, ns, name, {
      secretProviderClassName: className,
      secretObject: { data: [{ sourcePath, targetKey: 'pw' }] },
    });
  const failedCondition = async (name: string) => {
    const ss = (await cluster.admin.custom.getNamespacedCustomObject({ ...SS, namespace: ns, name })) as {
      status?: { conditions?: Condition[] };
    };
    return ss.status?.conditions?.find((c) => c.status === 'False');
  };
  const secretText = async (name: string) => {
    const secret = await cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
    return Buffer.from(secret.data?.['pw'] ?? '', 'base64').toString();
  };

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'secretsync-changes');
    await createSecretProviderClass(cluster, ns, 'db', { provider: 'file', parameters: { objects: objects('a') } });
    stack = await startSyncControllerStack(cluster, { a: 'from-a', b: 'from-b', c: 'c1', d: 'd1' }, [
      '--rotation-poll-interval=0',
    ]);
  });

  after(async () => {
    await manager?.stop();
    await stack?.stop();
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('a change of the class re-syncs the SecretSyncs that use it', async () => {
    await createSync('follow', 'db');
    await until('Secret follow', () => secretText('follow').catch(() => undefined));
    expect(await secretText('follow')).to.equal('from-a');
    await cluster.admin.custom.patchNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'db',
      body: [{ op: 'replace', path: '/spec/parameters/objects', value: objects('b') }],
    });
    await until('Secret follow from b', async () => (await secretText('follow')) === 'from-b');
  });

  it('a managed Secret deleted out of band comes back (watch of managed Secrets, no poll)', async () => {
    await createSync('drift-delete', 'db');
    await until('Secret drift-delete', () => secretText('drift-delete').catch(() => undefined));
    await cluster.admin.core.deleteNamespacedSecret({ name: 'drift-delete', namespace: ns });
    const { value } = await until('Secret drift-delete restored', () =>
      cluster.admin.core.readNamespacedSecret({ name: 'drift-delete', namespace: ns }).catch(() => undefined),
    );
    expect(Buffer.from(value.data?.['pw'] ?? '', 'base64').toString()).to.equal('from-b');
    expect(value.metadata?.labels).to.deep.equal({ 'secrets-store.sync.x-k8s.io': '' });
  });

  it('a managed Secret edited out of band is restored', async () => {
    await createSync('drift-edit', 'db');
    await until('Secret drift-edit', () => secretText('drift-edit').catch(() => undefined));
    await cluster.admin.core.patchNamespacedSecret({
      name: 'drift-edit',
      namespace: ns,
      body: [{ op: 'replace', path: '/data/pw', value: Buffer.from('tampered').toString('base64') }],
    });
    await until('Secret drift-edit restored', async () => (await secretText('drift-edit')) === 'from-b');
  });

  const failures: [string, string, () => Promise<void>, string, RegExp][] = [
    [
      'the provider refuses the parameters: ProviderError with its message',
      'bad-params',
      async () => {
        await createSecretProviderClass(cluster, ns, 'bad-params', { provider: 'file', parameters: {} });
        await createSync('bad-params', 'bad-params');
      },
      'ProviderError',
      /^fetching secrets from the provider failed: .*parameter "objects" is required/,
    ],
    [
      'no provider socket: SecretProviderClassMisconfigured',
      'no-provider',
      async () => {
        await createSecretProviderClass(cluster, ns, 'no-provider', { provider: 'nowhere', parameters: {} });
        await createSync('no-provider', 'no-provider');
      },
      'SecretProviderClassMisconfigured',
      /^fetching secrets from the provider failed: provider "nowhere" is not running/,
    ],
    [
      'a sourcePath the provider does not return: RemoteSecretStoreFetchFailed',
      'no-path',
      () => createSync('no-path', 'db', 'missing').then(() => undefined),
      'RemoteSecretStoreFetchFailed',
      /"missing" is not a file/,
    ],
  ];
  for (const [what, name, make, reason, message] of failures)
    it(what, async () => {
      await make();
      const { value } = await until(`failed condition of ${name}`, () => failedCondition(name));
      expect(value).to.include({ type: 'SecretCreated', reason });
      expect(value.message).to.match(message);
      await cluster.admin.core.readNamespacedSecret({ name, namespace: ns }).then(
        () => expect.fail(`no Secret ${name} expected`),
        (err: unknown) => expect(statusOf(err)).to.equal(404),
      );
    });

  it('the garbage collector deletes the Secret of a deleted SecretSync (its one owner)', async () => {
    manager = await startControllerManager(cluster, ['garbage-collector-controller']);
    await untilGarbageCollectorWorks(cluster, ns, manager);
    await createSync('collected', 'db');
    await until('Secret collected', () => secretText('collected').catch(() => undefined));
    await cluster.admin.custom.deleteNamespacedCustomObject({ ...SS, namespace: ns, name: 'collected' });
    await until('Secret collected gone', () =>
      cluster.admin.core.readNamespacedSecret({ name: 'collected', namespace: ns }).then(
        () => false,
        (err: unknown) => statusOf(err) === 404,
      ),
    );
  });

  it('a new refresh-requested-at on the SecretSync re-fetches at once', async () => {
    await createSecretProviderClass(cluster, ns, 'refreshable', {
      provider: 'file',
      parameters: { objects: objects('c') },
    });
    await createSync('refresh', 'refreshable');
    await until('Secret refresh', async () => (await secretText('refresh').catch(() => '')) === 'c1');
    await writeFile(join(stack.providerRoot, 'c'), 'c2');
    await cluster.admin.custom.patchNamespacedCustomObject({
      ...SS,
      namespace: ns,
      name: 'refresh',
      body: [
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'secrets-store.csi.k8s.io/refresh-requested-at': '2026-01-01T00:00:00Z' },
        },
      ],
    });
    await until('Secret refresh re-fetched', async () => (await secretText('refresh')) === 'c2');
  });

  it("the class's rotation-poll-interval annotation polls its SecretSyncs, also with --rotation-poll-interval=0", async () => {
    await createSecretProviderClass(
      cluster,
      ns,
      'fast',
      { provider: 'file', parameters: { objects: objects('d') } },
      { 'secrets-store.csi.k8s.io/rotation-poll-interval': '1s' },
    );
    await createSync('fast', 'fast');
    await until('Secret fast', async () => (await secretText('fast').catch(() => '')) === 'd1');
    await writeFile(join(stack.providerRoot, 'd'), 'd2');
    await until('Secret fast polled', async () => (await secretText('fast')) === 'd2');
  });
});
