import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import {
  createSecretSync,
  installSyncControllerManifests,
  SECRET_SYNC_RESOURCE,
  type SecretSyncCondition,
  metricSum,
  startSyncControllerStack,
  SYNC_CONTROLLER_USER,
  type SyncControllerStack,
} from '../support/sync-controller.js';
import { makeTestPki } from '../support/test-pki.js';
import { auditedCalls } from '../support/rbac-identity.js';
import { until } from '../support/until.js';

// The SecretSync controller against a real kube-apiserver, authorised only by
// deploy/sync-controller/rbac.yaml, with our file provider as its provider.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SS = SECRET_SYNC_RESOURCE;

type Condition = SecretSyncCondition;
interface SecretSyncObject {
  metadata: { uid: string };
  status?: { syncHash?: string; conditions?: Condition[] };
}

describe('sync controller: SecretSync → Secret (real kube-apiserver, file provider)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: SyncControllerStack;
  let ns: string;
  let pkiDir: string;

  const objects = [
    { objectName: 'password', sourcePath: 'db/password' },
    { objectName: 'server.pem', sourcePath: 'server.pem' },
  ];
  const createSync = (name: string, secretObject: Record<string, unknown>, className = 'db') =>
    createSecretSync(cluster, ns, name, { secretProviderClassName: className, secretObject });
  const readSync = async (name: string) =>
    (await cluster.admin.custom.getNamespacedCustomObject({ ...SS, namespace: ns, name })) as SecretSyncObject;
  const condition = async (name: string, type: string) =>
    (await readSync(name)).status?.conditions?.find((c) => c.type === type);
  const readSecret = (name: string) => cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
  const eventsOf = async (name: string) =>
    (
      await cluster.admin.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: `involvedObject.kind=SecretSync,involvedObject.name=${name}`,
      })
    ).items.map((e) => `${e.type} ${e.reason}: ${e.message}`);
  const untilEvent = (name: string, reason: string) =>
    until(`${reason} event on ${name}`, async () => (await eventsOf(name)).find((e) => e.includes(` ${reason}:`)));
  const text = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString();

  before(async () => {
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'secretsync');
    pkiDir = await mkdtemp(join(tmpdir(), 'ssc-syncctl-pki-'));
    const pki = await makeTestPki(pkiDir);
    const serverPem = (await readFile(pki.serverCertPath, 'utf8')) + (await readFile(pki.serverKeyPath, 'utf8'));
    await createSecretProviderClass(cluster, ns, 'db', {
      provider: 'file',
      parameters: { objects: JSON.stringify(objects) },
    });
    stack = await startSyncControllerStack(cluster, { 'db/password': 'pw-1', 'server.pem': serverPem }, [
      '--rotation-poll-interval=1s',
      '--token-request-audience=aud-a, aud-b',
    ]);
  });

  after(async () => {
    await stack?.stop();
    if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('is ready once its caches listed (/readyz, /healthz)', async () => {
    await until('/readyz 200', async () => (await stack.probe('/readyz')) === 200);
    expect(await stack.probe('/healthz')).to.equal(200);
  });

  it('creates the Secret: data, controller label, one owner reference to the SecretSync, conditions', async () => {
    await createSync('app', { data: [{ sourcePath: 'password', targetKey: 'db-password' }], labels: { team: 'a' } });
    const { value: secret } = await until('Secret app', () => readSecret('app').catch(() => undefined));
    const ss = await readSync('app');
    expect(text(secret.data?.['db-password'])).to.equal('pw-1');
    expect(secret.type).to.equal('Opaque');
    expect(secret.metadata?.labels).to.deep.equal({ team: 'a', 'secrets-store.sync.x-k8s.io': '' });
    expect(secret.metadata?.ownerReferences).to.deep.equal([
      { apiVersion: 'secret-sync.x-k8s.io/v1alpha1', kind: 'SecretSync', name: 'app', uid: ss.metadata.uid },
    ]);
    expect(secret.metadata?.managedFields?.map((f) => f.manager)).to.deep.equal(['secrets-store-sync-controller']);
    await until('conditions', async () => (await condition('app', 'SecretUpdated'))?.status === 'True');
    expect(await condition('app', 'SecretCreated')).to.include({
      status: 'True',
      reason: 'CreateSuccessful',
      message: 'Secret created successfully.',
    });
    expect((await readSync('app')).status?.syncHash).to.match(/^v1:[0-9a-f]{64}$/);
    expect((await untilEvent('app', 'SecretSynced')).value).to.equal('Normal SecretSynced: Secret created');
  });

  it('writes nothing while the content is unchanged, over several polls', async () => {
    const before = await stack.metrics();
    const patches = metricSum(before, 'rest_client_requests_total', ['method="PATCH"']);
    const unchanged = metricSum(before, 'secretsync_reconcile_total', ['result="unchanged"']);
    await until('three unchanged polls', async () => {
      const now = await stack.metrics();
      return metricSum(now, 'secretsync_reconcile_total', ['result="unchanged"']) >= unchanged + 3 ? now : false;
    });
    expect(metricSum(await stack.metrics(), 'rest_client_requests_total', ['method="PATCH"'])).to.equal(patches);
  });

  it('mints one token per configured audience for serviceAccountName, cached across polls', async () => {
    const tokenCalls = (await auditedCalls(cluster, SYNC_CONTROLLER_USER)).filter(
      (c) => c.resource === 'serviceaccounts/token' && c.namespace === ns,
    );
    expect(tokenCalls.map((c) => `${c.verb} ${c.name} ${c.code}`)).to.deep.equal([
      'create default 201',
      'create default 201',
    ]);
  });

  it('updates the Secret when the source changes', async () => {
    await writeFile(join(stack.providerRoot, 'db/password'), 'pw-2');
    await until('Secret app updated', async () => text((await readSecret('app')).data?.['db-password']) === 'pw-2');
    expect(await condition('app', 'SecretUpdated')).to.include({ status: 'True', reason: 'SecretUpToDate' });
  });

  it('splits a kubernetes.io/tls Secret into tls.crt and tls.key', async () => {
    await createSync('tls', {
      type: 'kubernetes.io/tls',
      data: [
        { sourcePath: 'server.pem', targetKey: 'tls.crt' },
        { sourcePath: 'server.pem', targetKey: 'tls.key' },
      ],
    });
    const { value: secret } = await until('Secret tls', () => readSecret('tls').catch(() => undefined));
    expect(secret.type).to.equal('kubernetes.io/tls');
    expect(text(secret.data?.['tls.crt'])).to.match(/^-----BEGIN CERTIFICATE-----/);
    expect(text(secret.data?.['tls.crt'])).not.to.include('PRIVATE KEY');
    expect(text(secret.data?.['tls.key'])).to.match(/^-----BEGIN [A-Z ]*PRIVATE KEY-----/);
    expect(text(secret.data?.['tls.key'])).not.to.include('CERTIFICATE');
  });

  it('never adopts a Secret it does not own: untouched, the condition says so', async () => {
    const existing = await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'taken' }, stringData: { mine: 'keep' } },
    });
    await createSync('taken', { data: [{ sourcePath: 'password', targetKey: 'db-password' }] });
    const { value: failed } = await until('refusal', async () => {
      const c = await condition('taken', 'SecretCreated');
      return c?.status === 'False' ? c : undefined;
    });
    expect(failed.reason).to.equal('ControllerPatchError');
    expect(failed.message).to.equal(
      'failed to patch secret "taken": the Secret exists and has no owner; it is not adopted and was left untouched',
    );
    const after = await readSecret('taken');
    expect(after.metadata?.resourceVersion).to.equal(existing.metadata?.resourceVersion);
    expect(Object.keys(after.data ?? {})).to.deep.equal(['mine']);
    expect((await untilEvent('taken', 'SecretNotOwned')).value).to.equal(
      'Warning SecretNotOwned: ControllerPatchError: failed to patch secret "taken": the Secret exists and has no owner; it is not adopted and was left untouched',
    );
  });

  it('a missing class: SecretProviderClassMisconfigured with upstream message', async () => {
    await createSync('lost', { data: [{ sourcePath: 'password', targetKey: 'p' }] }, 'nowhere');
    const { value: c } = await until('condition', async () => {
      const found = await condition('lost', 'SecretCreated');
      return found?.status === 'False' ? found : undefined;
    });
    expect(c.reason).to.equal('SecretProviderClassMisconfigured');
    expect(c.message).to.equal(
      'failed to get SecretProviderClass "nowhere": SecretProviderClass.secrets-store.csi.x-k8s.io "nowhere" not found',
    );
    expect(await condition('lost', 'SecretUpdated')).to.include({ status: 'Unknown', reason: 'NoUpdatesAttemptedYet' });
    expect((await untilEvent('lost', 'SecretSyncFailed')).value).to.match(
      /^Warning SecretSyncFailed: SecretProviderClassMisconfigured: failed to get SecretProviderClass "nowhere"/,
    );
  });

  it('refuses a kubernetes.io/service-account-token Secret', async () => {
    await createSync('sa-token', {
      type: 'kubernetes.io/service-account-token',
      data: [{ sourcePath: 'password', targetKey: 't' }],
    });
    const { value } = await until('refusal', async () => {
      const c = await condition('sa-token', 'SecretCreated');
      return c?.status === 'False' ? c : undefined;
    });
    expect(value).to.include({
      reason: 'ControllerPatchError',
      message:
        'failed to patch secret "sa-token": Secrets of type kubernetes.io/service-account-token are never written',
    });
  });

  it("every request it made for this test's namespace, and cluster-wide, was allowed by deploy/sync-controller/rbac.yaml", async () => {
    // Other tests' namespaces stay Terminating (no namespace controller runs), where creates are refused.
    const refused = (await auditedCalls(cluster, SYNC_CONTROLLER_USER)).filter(
      (c) => (c.code === 401 || c.code === 403) && (c.namespace === undefined || c.namespace === ns),
    );
    expect(refused.map((c) => `${c.verb} ${c.resource} ${c.namespace ?? ''}/${c.name ?? ''} ${c.code}`)).to.deep.equal(
      [],
    );
  });
});
