import { expect } from 'chai';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { makeCertificateChain, pemBlocks, type CertificateMaterial } from '../support/azure-keyvault/certificates.js';
import { startAzureStandIn, type AzureStandIn } from '../support/azure-keyvault/stand-in.js';
import type { VaultStore } from '../support/azure-keyvault/vault-store.js';
import {
  AZURE_AUDIENCE,
  objectsParameter,
  workloadIdentity,
  type WorkloadIdentity,
} from '../support/azure-provider.js';
import { failure } from '../support/call-outcome.js';
import { mountsUnder } from '../support/driver-stack.js';
import {
  goDriverUnavailable,
  startGoDriverStack,
  type GoDriverProvider,
  type GoDriverStack,
} from '../support/go-driver.js';
import { TOKENS_KEY, type InlinePod } from '../support/inline-pod.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';
import { tokensAttribute } from '../support/service-account-tokens.js';

// Our `azure` provider behind upstream's Go driver v1.6.1 (go-driver.ts: the Go driver on a
// CSI socket, classes, pods and pod status objects in the real kube-apiserver, our CsiClient
// sending kubelet's NodePublishVolume), reading through the real Azure SDK from the Key
// Vault + Entra stand-in (no Key Vault can run here: test/support/azure-keyvault/stand-in.ts
// says why) under the real host names (--test-only-connect-to), its CA trusted through
// NODE_EXTRA_CA_CERTS. No kubelet runs, so nobody mints the pod's token for the CSIDriver's
// tokenRequests audience api://AzureADTokenExchange: the test signs one for the pod's
// service account with an issuer the stand-in's Entra trusts as a federated credential and
// puts it where kubelet puts it (volume_context), as go-driver-vault-provider.test.ts does.
//
// Rotation: the Go driver v1.6.1 never sends current_object_version. Its only Mount call,
// nodeserver.go mountSecretsStoreObjectContent, passes nil as MountContent's
// oldObjectVersions (provider_client.go), and pkg/rotation (the old reconciler that did pass
// them) is gone in v1.6.1: rotation is kubelet's republish. So under the Go driver every
// republish is a full read (each object's value downloaded again, no version listing), and
// our properties-only answer (no files) never happens; with our driver it does
// (azure-provider.test.ts, docs/providers/azure.md#rotation). What keeps an unchanged
// republish from touching the volume is upstream's atomic writer, which skips the write when
// every file's bytes are equal.

const VAULT = 'kv-go';
const WI_CLIENT = '1a1a1a1a-0000-4000-8000-000000000001';
const WI_DENIED_CLIENT = '1b1b1b1b-0000-4000-8000-000000000002';
const SP_CLIENT = '1c1c1c1c-0000-4000-8000-000000000003';
const SP_SECRET = 'sp-client-secret-value';
const OUTSIDER_CLIENT = '1d1d1d1d-0000-4000-8000-000000000004';
const OUTSIDER_SECRET = 'outsider-client-secret-value';
/** The label upstream's docs tell users to put on nodePublishSecretRef Secrets (v1.6.1 itself no longer reads it: kubelet passes the data). */
const USED_LABEL = 'secrets-store.csi.k8s.io/used';

describe("our azure provider under upstream's Go driver v1.6.1 (real Go driver, kube-apiserver, Key Vault + Entra stand-in)", function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let standIn: AzureStandIn;
  let vault: VaultStore;
  let stack: GoDriverStack;
  let ns: string;
  let wi: WorkloadIdentity;
  let wiDenied: WorkloadIdentity;
  let chain: CertificateMaterial;
  let web: InlinePod;
  let batch: InlinePod;
  const version: Record<string, string> = {};
  const sentTokens: string[] = [];

  /** kubelet's request for `pod` with the pod's token for api://AzureADTokenExchange, signed by `identity`'s issuer. */
  async function withToken(pod: InlinePod, identity: WorkloadIdentity = wi): Promise<NodePublishVolumeRequest> {
    const request = await pod.publishRequest();
    const token = identity.issuer.token(`${ns}/default`, AZURE_AUDIENCE);
    sentTokens.push(token);
    return {
      ...request,
      volume_context: { ...request.volume_context, [TOKENS_KEY]: tokensAttribute(token, AZURE_AUDIENCE) },
    };
  }

  const podStatus = (pod: InlinePod, spc: string) => readPodStatus(cluster, ns, pod.name, spc);

  /** Key Vault operations since the log was cleared, as `operation status`, sorted. */
  function keyVaultCalls(): string[] {
    return standIn
      .requests()
      .filter((r) => r.service === 'keyvault')
      .map((r) => `${r.operation} ${r.status}`)
      .sort();
  }

  before(async function () {
    const unavailable = goDriverUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the azure provider under the Go driver: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'goazure');
    standIn = await startAzureStandIn();
    // Every vault exists before the provider starts: --test-only-connect-to names them.
    vault = standIn.vault(VAULT);
    version['db'] = vault.setSecret('db-password', 'hunter2');
    chain = await makeCertificateChain('rsa', 'web.example.test');
    version['tls'] = await vault.importCertificate('web-tls', chain, 'application/x-pkcs12');
    version['key'] = vault.createKey('signing', 'EC', { crv: 'P-256' });
    const federated = workloadIdentity(standIn, WI_CLIENT, `${ns}/default`);
    wi = federated;
    vault.grant(federated.principal, ['secrets', 'keys', 'certificates']);
    wiDenied = workloadIdentity(standIn, WI_DENIED_CLIENT, `${ns}/default`);
    vault.grant(standIn.registerApp(SP_CLIENT, SP_SECRET), ['secrets']);
    standIn.registerApp(OUTSIDER_CLIENT, OUTSIDER_SECRET);

    const classOf = (objects: Record<string, string>[], extra: Record<string, string> = {}) => ({
      provider: 'azure',
      parameters: { keyvaultName: VAULT, tenantId: standIn.tenantId, objects: objectsParameter(objects), ...extra },
    });
    await createSecretProviderClass(
      cluster,
      ns,
      'app',
      classOf(
        [
          { objectName: 'db-password', objectType: 'secret', filePermission: '0400' },
          { objectName: 'web-tls', objectType: 'secret', objectAlias: 'tls.pem' },
          { objectName: 'web-tls', objectType: 'cert', objectAlias: 'tls.crt' },
          { objectName: 'signing', objectType: 'key' },
        ],
        { clientID: WI_CLIENT },
      ),
    );
    await createSecretProviderClass(cluster, ns, 'sp', classOf([{ objectName: 'db-password', objectType: 'secret' }]));
    await createSecretProviderClass(
      cluster,
      ns,
      'missing',
      classOf([{ objectName: 'absent', objectType: 'secret' }], { clientID: WI_CLIENT }),
    );
    await createSecretProviderClass(
      cluster,
      ns,
      'denied-wi',
      classOf([{ objectName: 'db-password', objectType: 'secret' }], { clientID: WI_DENIED_CLIENT }),
    );
    const azureProvider: GoDriverProvider = {
      name: 'azure',
      // No read cache: the rotation test changes a secret and republishes at once.
      args: () => [`--test-only-connect-to=${standIn.connectTo}`, '--read-cache-window=0'],
      env: { NODE_EXTRA_CA_CERTS: standIn.caPath, AZURE_POD_IDENTITY_AUTHORITY_HOST: standIn.imdsUrl },
    };
    stack = await startGoDriverStack({ cluster, providers: [azureProvider], rotation: true });
    web = await stack.pod({ namespace: ns, name: 'web', spc: 'app' });
  });
  after(async () => {
    await stack?.stop();
    await standIn?.close();
  });

  it('publishes with workload identity: a secret with its filePermission, a certificate-backed secret as key-first PEM, the certificate, the public key', async () => {
    await stack.client.publish(await withToken(web));
    const target = web.targetPath;
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    const pem = await readFile(join(target, 'tls.pem'), 'utf8');
    expect(pem.indexOf('-----BEGIN PRIVATE KEY-----')).to.equal(0);
    const [key] = pemBlocks(pem, 'PRIVATE KEY');
    expect(createPrivateKey(key ?? '').export({ format: 'der', type: 'pkcs8' })).to.deep.equal(
      createPrivateKey(chain.keyPem).export({ format: 'der', type: 'pkcs8' }),
    );
    // Leaf → intermediate → root.
    const certs = pemBlocks(pem, 'CERTIFICATE').map((c) => c.replace(/\s/g, ''));
    expect(certs).to.deep.equal(chain.certPems.map((c) => c.replace(/\s/g, '')));
    const crt = await readFile(join(target, 'tls.crt'), 'utf8');
    expect(crt.replace(/\s/g, '')).to.equal(certs[0]);
    expect(crt).to.match(/^-----BEGIN CERTIFICATE-----\n/);
    const jwk = vault.versions('keys', 'signing')?.[0]?.jwk;
    const spki = createPublicKey({ key: { kty: jwk?.kty, crv: jwk?.crv, x: jwk?.x, y: jwk?.y }, format: 'jwk' }).export(
      { format: 'pem', type: 'spki' },
    );
    expect(await readFile(join(target, 'signing'), 'utf8')).to.equal(spki);
    for (const name of ['tls.pem', 'tls.crt', 'signing'])
      expect((await stat(join(target, name))).mode & 0o777, name).to.equal(0o644);
    expect(await mountsUnder(target)).to.deep.equal([target]);
  });

  it("records Azure's object ids and Key Vault's version ids in the SecretProviderClassPodStatus", async () => {
    const status = await podStatus(web, 'app');
    expect(status.status).to.include({
      podName: 'web',
      secretProviderClassName: 'app',
      mounted: true,
      targetPath: web.targetPath,
    });
    expect(status.status.objects).to.deep.equal([
      { id: 'cert/web-tls', version: version['tls'] },
      { id: 'key/signing', version: version['key'] },
      { id: 'secret/db-password', version: version['db'] },
      { id: 'secret/web-tls', version: version['tls'] },
    ]);
    for (const o of status.status.objects) expect(o.version).to.match(/^[0-9a-f]{32}$/);
  });

  it("publishes as a service principal from a nodePublishSecretRef Secret (clientid/clientsecret, labelled used=true as upstream's docs ask)", async () => {
    batch = await stack.pod({
      namespace: ns,
      name: 'batch',
      spc: 'sp',
      nodePublishSecret: { clientid: SP_CLIENT, clientsecret: SP_SECRET },
    });
    const secret = await cluster.admin.core.readNamespacedSecret({ namespace: ns, name: 'batch-creds' });
    await cluster.admin.core.replaceNamespacedSecret({
      namespace: ns,
      name: 'batch-creds',
      body: { ...secret, metadata: { ...secret.metadata, labels: { [USED_LABEL]: 'true' } } },
    });
    standIn.clearRequests();
    await stack.client.publish(await batch.publishRequest());
    expect(await readFile(join(batch.targetPath, 'db-password'), 'utf8')).to.equal('hunter2');
    expect((await podStatus(batch, 'sp')).status.objects).to.deep.equal([
      { id: 'secret/db-password', version: version['db'] },
    ]);
    // The value was read as the service principal (the 401 before it is Key Vault's challenge).
    const reads = standIn.requests().filter((r) => r.service === 'keyvault' && r.status === 200);
    expect(reads.map((r) => [r.operation, r.principal])).to.deep.equal([['getSecret', SP_CLIENT]]);
  });

  it("republish after a new secret version in Key Vault (kubelet's requiresRepublish, --enable-secret-rotation): new content and version", async () => {
    const rotated = vault.setSecret('db-password', 'correct horse');
    await stack.client.publish(await withToken(web));
    expect(await readFile(join(web.targetPath, 'db-password'), 'utf8')).to.equal('correct horse');
    expect((await stat(join(web.targetPath, 'db-password'))).mode & 0o777).to.equal(0o400);
    const objects = (await podStatus(web, 'app')).status.objects;
    expect(objects.find((o) => o.id === 'secret/db-password')?.version)
      .to.equal(rotated)
      .and.not.equal(version['db']);
    expect(objects.find((o) => o.id === 'secret/web-tls')?.version).to.equal(version['tls']);
    version['db'] = rotated;
    expect(await mountsUnder(web.targetPath)).to.deep.equal([web.targetPath]);
  });

  it('republish with nothing new: the Go driver sends no current_object_version, so every value is read again (no version listing); the atomic writer keeps the files and the pod status is unchanged', async () => {
    const target = web.targetPath;
    const before = {
      data: await readlink(join(target, '..data')),
      ino: (await stat(join(target, '..data', 'db-password'))).ino,
      pem: await readFile(join(target, 'tls.pem'), 'utf8'),
    };
    const statusBefore = await podStatus(web, 'app');
    standIn.clearRequests();
    await stack.client.publish(await withToken(web));
    // A full read: each object's value once, and no get*Versions call (the provider lists
    // versions only when the driver says what is mounted, which the Go driver never does).
    expect(keyVaultCalls()).to.deep.equal(['getCertificate 200', 'getKey 200', 'getSecret 200', 'getSecret 200']);
    expect(
      standIn
        .requests()
        .filter((r) => r.service === 'keyvault')
        .map((r) => r.principal),
    ).to.deep.equal([WI_CLIENT, WI_CLIENT, WI_CLIENT, WI_CLIENT]);
    expect(await readlink(join(target, '..data'))).to.equal(before.data);
    expect((await stat(join(target, '..data', 'db-password'))).ino).to.equal(before.ino);
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse');
    expect(await readFile(join(target, 'tls.pem'), 'utf8')).to.equal(before.pem);
    const statusAfter = await podStatus(web, 'app');
    expect(statusAfter.status).to.deep.equal(statusBefore.status);
    expect(statusAfter.metadata.resourceVersion).to.equal(statusBefore.metadata.resourceVersion);
  });

  it('an object missing from the vault: NOT_FOUND through the Go driver naming the object and vault, nothing mounted', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'missing', spc: 'missing' });
    const result = await failure(stack.client.publish(await withToken(pod)));
    expect(result.code).to.equal('NOT_FOUND');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/missing`)
      .and.include(`secret "absent" in key vault "${VAULT}" not found`);
    for (const secret of [sentTokens.at(-1) ?? '', 'hunter2', 'correct horse'])
      expect(result.message).not.to.include(secret);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'missing').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('a workload identity without access to the vault: PERMISSION_DENIED naming the identity kind, no token or value in the message, nothing mounted', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'denied-wi', spc: 'denied-wi' });
    const request = await withToken(pod, wiDenied);
    const result = await failure(stack.client.publish(request));
    expect(result.code).to.equal('PERMISSION_DENIED');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/denied-wi`)
      .and.include(`key vault "${VAULT}" refused the workload identity for secret "db-password"`);
    for (const secret of [sentTokens.at(-1) ?? '', 'hunter2', 'correct horse'])
      expect(result.message).not.to.include(secret);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'denied-wi').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('a service principal without access to the vault: PERMISSION_DENIED naming the identity kind, no client secret or value in the message, nothing mounted', async () => {
    const pod = await stack.pod({
      namespace: ns,
      name: 'denied-sp',
      spc: 'sp',
      nodePublishSecret: { clientid: OUTSIDER_CLIENT, clientsecret: OUTSIDER_SECRET },
    });
    const result = await failure(stack.client.publish(await pod.publishRequest()));
    expect(result.code).to.equal('PERMISSION_DENIED');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/denied-sp`)
      .and.include(`key vault "${VAULT}" refused the service principal for secret "db-password"`);
    for (const secret of [OUTSIDER_SECRET, SP_SECRET, 'hunter2', 'correct horse'])
      expect(result.message).not.to.include(secret);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'sp').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('the provider logged no token, client secret or secret value', () => {
    const log = stack.providers.get('azure')?.stderr() ?? '';
    expect(log).to.include('mount served');
    for (const secret of [...sentTokens, SP_SECRET, OUTSIDER_SECRET, 'hunter2', 'correct horse'])
      expect(log).not.to.include(secret);
  });

  it('unpublishes: the mounts are gone', async () => {
    for (const pod of [web, batch]) {
      await stack.client.unpublish(pod.volumeId, pod.targetPath);
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    }
  });
});
