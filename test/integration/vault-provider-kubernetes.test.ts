import { AuthenticationV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { openBaoUnavailable, type OpenBao } from '../support/openbao.js';
import { startOpenBaoWithKubernetesAuth } from '../support/openbao-kubernetes-auth.js';
import { peerBinary } from '../support/peers.js';
import { until } from '../support/until.js';
import { podAttributes, startVaultProvider, type VaultProviderProcess } from '../support/vault-provider.js';

// Vault's Kubernetes auth with real service-account tokens: OpenBao's kubernetes auth
// method reviews them (TokenReview) against our real test kube-apiserver, with a reviewer
// ServiceAccount bound to system:auth-delegator; the pods' tokens come from the
// TokenRequest API, bound to a Pod object as kubelet's are (no kubelet runs here: the
// driver would pass exactly these tokens in csi.storage.k8s.io/serviceAccount.tokens).

describe('vault provider with Kubernetes auth (real kube-apiserver, real OpenBao)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let bao: OpenBao;
  let provider: VaultProviderProcess;
  let ns: string;

  /** A Pod of ServiceAccount `sa` (never scheduled) and a token bound to it for `audience`. */
  async function podToken(sa: string, pod: string, audience = 'vault'): Promise<{ token: string; uid: string }> {
    const created = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: pod },
        spec: {
          serviceAccountName: sa,
          automountServiceAccountToken: false,
          containers: [{ name: 'c', image: 'example.invalid/never-pulled' }],
        },
      },
    });
    const uid = created.metadata?.uid ?? '';
    const request = await cluster.admin.core.createNamespacedServiceAccountToken({
      namespace: ns,
      name: sa,
      body: {
        spec: {
          audiences: [audience],
          expirationSeconds: 3600,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid },
        },
      },
    });
    return { token: request.status?.token ?? '', uid };
  }

  function attrs(
    sa: string,
    pod: string,
    token: string,
    objects = '- {objectName: p, secretPath: secret/k8s/db, secretKey: password}\n',
  ): Record<string, string> {
    return {
      roleName: 'web',
      vaultAddress: bao.address,
      objects, // vaultAuthMountPath: the default, kubernetes
      ...podAttributes(pod, `${ns}/${sa}`),
      'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({
        vault: { token, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() },
      }),
    };
  }

  before(async function () {
    const unavailable =
      openBaoUnavailable() ?? (peerBinary('KUBE_APISERVER') ? undefined : 'the kube-apiserver peer is not installed');
    if (unavailable) {
      process.stderr.write(`    skipping the vault Kubernetes auth tests: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'vault-auth');
    for (const name of ['web', 'leaver', 'aud', 'other'])
      await cluster.admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    bao = await startOpenBaoWithKubernetesAuth(cluster, ns);
    await bao.putPolicy('web', 'path "secret/data/k8s/*" { capabilities = ["read"] }');
    await bao.write('auth/kubernetes/role/web', {
      bound_service_account_names: ['web', 'leaver', 'aud'],
      bound_service_account_namespaces: [ns],
      audience: 'vault',
      policies: ['web'],
      ttl: '10m',
    });
    await bao.write('secret/data/k8s/db', { data: { password: 'k8s-s3cret' } });
    provider = await startVaultProvider();
  });
  after(async () => {
    await provider?.stop();
    await bao?.stop();
    if (cluster && ns) {
      await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });

  it('a pod\'s bound token for audience "vault" logs in at auth/kubernetes and reads', async () => {
    const { token } = await podToken('web', 'web-0');
    const res = await provider.mount(attrs('web', 'web-0', token));
    expect(res.files[0]?.contents.toString()).to.equal('k8s-s3cret');
  });

  it('a service account the role does not bind: PERMISSION_DENIED naming the login path and role', async () => {
    const { token } = await podToken('other', 'other-0');
    const failure = await provider.mountError(attrs('other', 'other-0', token));
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details)
      .to.include('refused the login at "auth/kubernetes/login" as role "web"')
      .and.include('service account name not authorized');
  });

  it("a token for another audience: refused by the role's audience", async () => {
    const { token } = await podToken('aud', 'aud-0', 'not-vault');
    // Passed under "vault" on purpose: Vault itself must refuse it.
    const failure = await provider.mountError(attrs('aud', 'aud-0', token));
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details).to.include('as role "web"').and.include('invalid audience (aud) claim');
  });

  it("a deleted pod's bound token is refused (the kube-apiserver no longer accepts it)", async () => {
    const { token } = await podToken('leaver', 'leaver-0');
    // The token was good while the pod existed (asked of OpenBao directly, so the provider caches no login for it).
    const before = await bao.request('POST', 'auth/kubernetes/login', { token: '', body: { role: 'web', jwt: token } });
    expect(before?.auth?.client_token).to.be.a('string');
    await cluster.admin.core.deleteNamespacedPod({ namespace: ns, name: 'leaver-0', gracePeriodSeconds: 0 });
    // kube-apiserver caches a successful token authentication for a few seconds: wait until it refuses the token.
    const authn = cluster.admin.config.makeApiClient(AuthenticationV1Api);
    await until(
      "the deleted pod's token is refused by TokenReview",
      async () =>
        (await authn.createTokenReview({ body: { spec: { token, audiences: ['vault'] } } })).status?.authenticated !==
        true,
      30_000,
    );
    const failure = await provider.mountError(attrs('leaver', 'leaver-0', token));
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details).to.include('refused the login at "auth/kubernetes/login" as role "web"');
  });
});
