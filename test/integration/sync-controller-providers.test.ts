import { expect } from 'chai';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { openBaoUnavailable, type OpenBao } from '../support/openbao.js';
import { startOpenBaoWithKubernetesAuth } from '../support/openbao-kubernetes-auth.js';
import { makeTestCa, opensslDir, opensslVerify } from '../support/pki-test-ca.js';
import { startProviderProcess } from '../support/provider-process.js';
import {
  createSecretSync,
  installSyncControllerManifests,
  SECRET_SYNC_RESOURCE,
  type SecretSyncCondition,
  startSyncControllerWith,
  type SyncControllerStack,
  upstreamFakeProvider,
} from '../support/sync-controller.js';
import { statusOf, until } from '../support/until.js';
import { startVaultProvider } from '../support/vault-provider.js';

// The SecretSync controller with providers other than the file provider, one stack for the
// file: our vault provider logging in to a real OpenBao by Kubernetes auth (OpenBao reviews
// the controller-minted token of serviceAccountName with the real kube-apiserver), our pki
// provider with its per-namespace CA directory (--ca-dir: the controller sends no
// nodePublishSecretRef), and upstream's fake provider (the Go peer). The controller is bound
// by its own RBAC.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SS = SECRET_SYNC_RESOURCE;
/** The audience the controller mints tokens for, the class's `audience` and the Vault role's. */
const AUDIENCE = 'aud-a';

describe('sync controller with the vault (real OpenBao, Kubernetes auth), pki and upstream fake providers', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let bao: OpenBao | undefined;
  let stack: SyncControllerStack;
  let ns: string;
  const now = Math.floor(Date.now() / 1000);
  const syncCa = makeTestCa('sync CA', 'EC-P256', now - 3600, now + 30 * 86_400);

  const createSync = (
    name: string,
    className: string,
    data: { sourcePath: string; targetKey: string }[],
    serviceAccountName = 'app',
  ) =>
    createSecretSync(cluster, ns, name, {
      secretProviderClassName: className,
      serviceAccountName,
      secretObject: { data },
    });
  const secretData = async (name: string) => {
    const secret = await cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
    return Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
  };
  const failedCondition = async (name: string) => {
    const ss = (await cluster.admin.custom.getNamespacedCustomObject({ ...SS, namespace: ns, name })) as {
      status?: { conditions?: SecretSyncCondition[] };
    };
    return ss.status?.conditions?.find((c) => c.status === 'False');
  };
  const vaultClass = (name: string, role: string) =>
    createSecretProviderClass(cluster, ns, name, {
      provider: 'vault',
      parameters: {
        roleName: role,
        vaultAddress: bao?.address ?? '',
        audience: AUDIENCE,
        objects: '- {objectName: password, secretPath: secret/data/ssc/db, secretKey: password}\n',
      },
    });

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the sync controller's provider tests: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'secretsync-providers');
    for (const name of ['app'])
      await cluster.admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    bao = await startOpenBaoWithKubernetesAuth(cluster, ns);
    await bao.putPolicy('app', 'path "secret/data/ssc/*" { capabilities = ["read"] }');
    await bao.write('auth/kubernetes/role/app', {
      bound_service_account_names: ['app'],
      bound_service_account_namespaces: [ns],
      audience: AUDIENCE,
      policies: ['app'],
      ttl: '10m',
    });
    await bao.write('secret/data/ssc/db', { data: { password: 'vault-pw-1' } });
    stack = await startSyncControllerWith(
      cluster,
      [
        // Reads are reused for 5 s by default: a refresh right after a sync would get the old value.
        (providersDir) => startVaultProvider(['--read-cache-window=0'], {}, { providersDir }),
        async (providersDir, work) => {
          // The namespace's CA, as a Secret volume of the controller's pod would hold it.
          await mkdir(join(work, 'cas', ns), { recursive: true });
          await writeFile(join(work, 'cas', ns, 'ca.crt'), syncCa.certPem);
          await writeFile(join(work, 'cas', ns, 'ca.key'), syncCa.keyPem);
          return startProviderProcess('pki', [`--ca-dir=${join(work, 'cas')}`], {}, { providersDir });
        },
        upstreamFakeProvider('upstream-fake', { token: 'fake-token-1', 'app.json': '{"mode":"fake"}' }),
      ],
      ['--rotation-poll-interval=0', `--token-request-audience=${AUDIENCE}`],
    );
  });

  after(async () => {
    await stack?.stop();
    await bao?.stop();
    if (cluster && ns) {
      await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });

  it("vault: the Secret holds the KV value, read with serviceAccountName's token (Kubernetes auth)", async () => {
    await vaultClass('vault-db', 'app');
    await createSync('vault-db', 'vault-db', [{ sourcePath: 'password', targetKey: 'db-password' }]);
    const { value } = await until('Secret vault-db', () => secretData('vault-db').catch(() => undefined));
    expect(value).to.deep.equal({ 'db-password': 'vault-pw-1' });
  });

  it('vault: a new KV value reaches the Secret after a refresh (refresh-requested-at)', async () => {
    await bao?.write('secret/data/ssc/db', { data: { password: 'vault-pw-2' } });
    await cluster.admin.custom.patchNamespacedCustomObject({
      ...SS,
      namespace: ns,
      name: 'vault-db',
      body: [
        {
          op: 'add',
          path: '/metadata/annotations',
          value: { 'secrets-store.csi.k8s.io/refresh-requested-at': new Date().toISOString() },
        },
      ],
    });
    await until(
      'Secret vault-db refreshed',
      async () => (await secretData('vault-db'))['db-password'] === 'vault-pw-2',
    );
  });

  it("vault: a role Vault refuses: ProviderError with the provider's text, no secret value or token in it, no Secret", async () => {
    await vaultClass('vault-wrong-role', 'nope');
    await createSync('vault-wrong-role', 'vault-wrong-role', [{ sourcePath: 'password', targetKey: 'p' }]);
    const { value } = await until('failed condition of vault-wrong-role', () => failedCondition('vault-wrong-role'));
    expect(value).to.include({ type: 'SecretCreated', reason: 'ProviderError' });
    expect(value.message)
      .to.match(/^fetching secrets from the provider failed: /)
      .and.include('refused the login at "auth/kubernetes/login" as role "nope"');
    expect(value.message).not.to.match(/vault-pw|eyJ/); // no KV value, no JWT
    await cluster.admin.core.readNamespacedSecret({ name: 'vault-wrong-role', namespace: ns }).then(
      () => expect.fail('no Secret vault-wrong-role expected'),
      (err: unknown) => expect(statusOf(err)).to.equal(404),
    );
  });

  it("vault: the token is serviceAccountName's, not the controller's: a service account the role does not bind is refused", async () => {
    await createSync('vault-other-sa', 'vault-db', [{ sourcePath: 'password', targetKey: 'p' }], 'default');
    const { value } = await until('failed condition of vault-other-sa', () => failedCondition('vault-other-sa'));
    expect(value).to.include({ type: 'SecretCreated', reason: 'ProviderError' });
    expect(value.message)
      .to.include('refused the login at "auth/kubernetes/login" as role "app"')
      .and.include('service account name not authorized');
  });

  it("upstream's fake provider: the Secret holds the files it serves", async () => {
    await createSecretProviderClass(cluster, ns, 'fake', { provider: 'upstream-fake', parameters: {} });
    await createSync('fake', 'fake', [
      { sourcePath: 'token', targetKey: 'api-token' },
      { sourcePath: 'app.json', targetKey: 'config.json' },
    ]);
    const { value } = await until('Secret fake', () => secretData('fake').catch(() => undefined));
    expect(value).to.deep.equal({ 'api-token': 'fake-token-1', 'config.json': '{"mode":"fake"}' });
  });

  it('pki: a kubernetes.io/tls Secret whose tls.crt and tls.key verify against the CA of the namespace', async () => {
    await createSecretProviderClass(cluster, ns, 'web-cert', {
      provider: 'pki',
      parameters: { commonName: 'web', dnsNames: 'web.${POD_NAMESPACE}.svc' },
    });
    await createSecretSync(cluster, ns, 'web-tls', {
      secretProviderClassName: 'web-cert',
      serviceAccountName: 'app',
      secretObject: {
        type: 'kubernetes.io/tls',
        data: [
          { sourcePath: 'tls.crt', targetKey: 'tls.crt' },
          { sourcePath: 'tls.key', targetKey: 'tls.key' },
          { sourcePath: 'ca.crt', targetKey: 'ca.crt' },
        ],
      },
    });
    const { value: data } = await until('Secret web-tls', () => secretData('web-tls').catch(() => undefined));
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'web-tls', namespace: ns });
    expect(secret.type).to.equal('kubernetes.io/tls');
    expect(data['ca.crt']).to.equal(syncCa.certPem);
    const leaf = new X509Certificate(data['tls.crt'] ?? '');
    expect(leaf.subject).to.equal('CN=web');
    expect(leaf.subjectAltName).to.equal(`DNS:web.${ns}.svc`);
    const dir = await opensslDir();
    try {
      const verified = await opensslVerify(
        await dir.write('ca.crt', syncCa.certPem),
        await dir.write('tls.crt', data['tls.crt'] ?? ''),
      );
      expect(verified.output).to.include(': OK');
      expect(leaf.checkPrivateKey(createPrivateKey(data['tls.key'] ?? ''))).to.equal(true);
    } finally {
      await dir.done();
    }
  });

  it("pki: a namespace without a CA directory gets none (ProviderError CaMissing), not another namespace's", async () => {
    const other = await createNamespace(cluster, 'secretsync-no-ca');
    try {
      await cluster.admin.core.createNamespacedServiceAccount({
        namespace: other,
        body: { metadata: { name: 'app' } },
      });
      await createSecretProviderClass(cluster, other, 'web-cert', {
        provider: 'pki',
        parameters: { commonName: 'web' },
      });
      await createSecretSync(cluster, other, 'web-tls', {
        secretProviderClassName: 'web-cert',
        serviceAccountName: 'app',
        secretObject: { data: [{ sourcePath: 'tls.crt', targetKey: 'tls.crt' }] },
      });
      const { value } = await until('failed condition', async () => {
        const ss = (await cluster.admin.custom.getNamespacedCustomObject({
          ...SS,
          namespace: other,
          name: 'web-tls',
        })) as { status?: { conditions?: SecretSyncCondition[] } };
        return ss.status?.conditions?.find((c) => c.status === 'False');
      });
      expect(value).to.include({
        type: 'SecretCreated',
        reason: 'ProviderError',
        message: `fetching secrets from the provider failed: provider "pki" Mount failed: pki provider: --ca-dir ${other}/ has no ca.crt and ca.key`,
      });
    } finally {
      await cluster.admin.core.deleteNamespace({ name: other }).catch(() => undefined);
    }
  });
});
