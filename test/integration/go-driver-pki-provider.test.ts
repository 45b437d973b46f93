import { expect } from 'chai';
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { pemBlocks } from '../support/azure-keyvault/certificates.js';
import { failure } from '../support/call-outcome.js';
import { mountsUnder } from '../support/driver-stack.js';
import {
  goDriverUnavailable,
  startGoDriverStack,
  type GoDriverProvider,
  type GoDriverStack,
} from '../support/go-driver.js';
import type { InlinePod } from '../support/inline-pod.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';
import { caSecret, makeTestCa, opensslDir, opensslVerify, type TestCa } from '../support/pki-test-ca.js';
import { parseMetrics } from '../support/provider-process.js';

// Our `pki` provider behind upstream's Go driver v1.6.1 (go-driver.ts: the Go driver on a
// CSI socket, classes, pods and pod status objects in the real kube-apiserver, our CsiClient
// sending kubelet's NodePublishVolume). The CA is a real Secret in the pod's namespace,
// named by the volume's nodePublishSecretRef and labelled secrets-store.csi.k8s.io/used=true
// as upstream's docs ask (v1.6.1 no longer reads the label: kubelet passes the data). Each
// request carries the Secret's data as kubelet reads it from the API at every
// NodePublishVolume, so editing the Secret reaches the next republish, as on a node.
//
// Rotation: the Go driver v1.6.1 never sends current_object_version (nodeserver.go passes
// nil as MountContent's oldObjectVersions; rotation is kubelet's republish). Our provider
// therefore cannot see what is mounted and decides `first` on every Mount: each republish
// issues a new certificate and key (new serial in the pod status), however far the
// renewal point is. The tests assert exactly that (docs/providers/pki.md#under-upstreams-go-driver);
// renewal spaced by the renewal rule (docs/providers/pki.md, "Renewal") needs our driver
// (pki-provider-driver.test.ts).

/** The label upstream's docs tell users to put on nodePublishSecretRef Secrets. */
const USED_LABEL = 'secrets-store.csi.k8s.io/used';
const D = 24 * 3600;

/** The serial as the provider's version: 40 lowercase hex digits. */
const serialOf = (leaf: X509Certificate) => leaf.serialNumber.toLowerCase().padStart(40, '0');
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
/** The base64 lines of a PEM key: any of them in a message would be key material. */
const keyLines = (pem: string) => pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));

describe("our pki provider under upstream's Go driver v1.6.1 (real Go driver, kube-apiserver, CA Secret by nodePublishSecretRef)", function () {
  this.timeout(300_000);
  const now = Math.floor(Date.now() / 1000);
  const oldCa: TestCa = makeTestCa('go old CA', 'EC-P256', now - 100 * D, now + 300 * D);
  const newCa: TestCa = makeTestCa('go new CA', 'RSA-2048', now - D, now + 700 * D);
  let cluster: KubeCluster;
  let stack: GoDriverStack;
  let ns: string;
  let web: InlinePod;
  /** Every private key the volume showed (tls.key), for the no-key-material checks. */
  const leafKeys: string[] = [];

  const podStatus = (pod: InlinePod, spc: string) => readPodStatus(cluster, ns, pod.name, spc);

  /** kubelet's NodePublishVolume for `pod`: `secrets` is its nodePublishSecretRef Secret's data as the API holds it now. */
  async function kubeletRequest(pod: InlinePod): Promise<NodePublishVolumeRequest> {
    const request = await pod.publishRequest();
    const secret = await cluster.admin.core.readNamespacedSecret({ namespace: ns, name: `${pod.name}-creds` });
    const data = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
    return { ...request, secrets: data };
  }

  /** Replaces the CA Secret of `pod` through the API, keeping upstream's label. */
  async function setCaSecret(pod: InlinePod, data: Record<string, string>): Promise<void> {
    const name = `${pod.name}-creds`;
    await cluster.admin.core.replaceNamespacedSecret({
      namespace: ns,
      name,
      body: { metadata: { name, labels: { [USED_LABEL]: 'true' } }, stringData: data },
    });
  }

  async function podWithCa(name: string, spc: string, data: Record<string, string>): Promise<InlinePod> {
    const pod = await stack.pod({ namespace: ns, name, spc, nodePublishSecret: data });
    await setCaSecret(pod, data);
    return pod;
  }

  /** A sample (`name{labels}`) of the provider process's /metrics; 0 when absent. Counted before each Mount answers. */
  async function metric(sample: string): Promise<number> {
    const log = stack.providers.get('pki')?.stderr() ?? '';
    const port = /"healthPort":(\d+)/.exec(log)?.[1];
    if (port === undefined) throw new Error('the pki provider logged no health port');
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return parseMetrics(await res.text()).get(sample) ?? 0;
  }
  const decisions = (decision: string) => metric(`pki_mount_decisions_total{decision="${decision}"}`);
  const CA_MISSING = 'provider_mount_total{provider="pki",result="error",error_type="CaMissing"}';

  async function verifies(bundle: Buffer | string, leaf: Buffer | string): Promise<{ ok: boolean; output: string }> {
    const dir = await opensslDir();
    try {
      return await opensslVerify(await dir.write('bundle.crt', bundle), await dir.write('leaf.crt', leaf), {
        purpose: 'sslserver',
      });
    } finally {
      await dir.done();
    }
  }

  const read = (pod: InlinePod, file: string) => readFile(join(pod.targetPath, file));
  const leafOf = async (pod: InlinePod) => new X509Certificate(await read(pod, 'tls.crt'));
  async function remember(pod: InlinePod): Promise<void> {
    leafKeys.push((await read(pod, 'tls.key')).toString('utf8'));
  }

  /** A failure's message carries no CA key, no issued key, no PEM private key at all. */
  function expectNoKeyMaterial(message: string): void {
    expect(message).not.to.include('PRIVATE KEY');
    for (const pem of [oldCa.keyPem, newCa.keyPem, ...leafKeys])
      for (const line of keyLines(pem)) expect(message).not.to.include(line);
  }

  before(async function () {
    const unavailable = goDriverUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the pki provider under the Go driver: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'gopki');
    await createSecretProviderClass(cluster, ns, 'web-cert', {
      provider: 'pki',
      parameters: {
        commonName: '${POD_NAME}.${POD_NAMESPACE}',
        dnsNames: '${POD_NAME}.${POD_NAMESPACE}.svc,${POD_NAME}.${POD_NAMESPACE}.svc.cluster.local',
        uris: 'spiffe://cluster.local/ns/${POD_NAMESPACE}/sa/${SERVICE_ACCOUNT_NAME}',
        usages: 'server,client',
        duration: '24h',
        keyFilePermission: '0640',
      },
    });
    await createSecretProviderClass(cluster, ns, 'bad-template', {
      provider: 'pki',
      parameters: { commonName: '${POD_IP}.${POD_NAMESPACE}' },
    });
    const pkiProvider: GoDriverProvider = { name: 'pki', args: () => ['--health-addr=127.0.0.1:0'] };
    stack = await startGoDriverStack({ cluster, providers: [pkiProvider], rotation: true });
    web = await podWithCa('web', 'web-cert', caSecret([oldCa], oldCa));
  });
  after(async () => {
    await stack?.stop();
  });

  it("publishes tls.crt (leaf + CA), tls.key, ca.crt with their real modes; the names come from the pod's name, namespace and service account", async () => {
    await stack.client.publish(await kubeletRequest(web));
    const chain = (await read(web, 'tls.crt')).toString('utf8');
    const blocks = pemBlocks(chain, 'CERTIFICATE');
    expect(blocks).to.have.length(2);
    expect(blocks[1]).to.equal(oldCa.certPem);
    const leaf = await leafOf(web);
    expect(leaf.subject).to.equal(`CN=web.${ns}`);
    expect(leaf.issuer).to.equal('CN=go old CA');
    expect(leaf.subjectAltName).to.equal(
      `DNS:web.${ns}.svc, DNS:web.${ns}.svc.cluster.local, URI:spiffe://cluster.local/ns/${ns}/sa/default`,
    );
    const key = (await read(web, 'tls.key')).toString('utf8');
    expect(key).to.match(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(leaf.checkPrivateKey(createPrivateKey(key))).to.equal(true);
    await remember(web);
    expect((await read(web, 'ca.crt')).toString('utf8')).to.equal(oldCa.certPem);
    // The modes the Go driver really wrote (a provider mode 0 would show as 000).
    const mode = async (file: string) => (await stat(join(web.targetPath, file))).mode & 0o777;
    expect(await mode('tls.crt')).to.equal(0o644);
    expect(await mode('tls.key')).to.equal(0o640);
    expect(await mode('ca.crt')).to.equal(0o644);
    expect(await mountsUnder(web.targetPath)).to.deep.equal([web.targetPath]);
  });

  it("records tls.crt, tls.key (the serial, hex) and ca.crt (the bundle's SHA-256) in the SecretProviderClassPodStatus", async () => {
    const status = await podStatus(web, 'web-cert');
    expect(status.status).to.include({
      podName: 'web',
      secretProviderClassName: 'web-cert',
      mounted: true,
      targetPath: web.targetPath,
    });
    const serial = serialOf(await leafOf(web));
    expect(serial).to.match(/^01[0-9a-f]{38}$/);
    expect([...status.status.objects].sort((a, b) => a.id.localeCompare(b.id))).to.deep.equal([
      { id: 'ca.crt', version: sha256(await read(web, 'ca.crt')) },
      { id: 'tls.crt', version: serial },
      { id: 'tls.key', version: serial },
    ]);
  });

  it("openssl verifies the leaf (purpose sslserver) with the volume's ca.crt", async () => {
    const result = await verifies(await read(web, 'ca.crt'), await read(web, 'tls.crt'));
    expect(result.ok, result.output).to.equal(true);
    expect(result.output).to.include(': OK');
  });

  it('every republish issues a new certificate and key (the Go driver sends no current_object_version: decision "first"), with its new serial in the pod status', async () => {
    for (let round = 0; round < 2; round++) {
      const before = {
        serial: serialOf(await leafOf(web)),
        key: await read(web, 'tls.key'),
        data: await readlink(join(web.targetPath, '..data')),
        status: await podStatus(web, 'web-cert'),
      };
      const firsts = await decisions('first');
      await stack.client.publish(await kubeletRequest(web));
      expect(await decisions('first')).to.equal(firsts + 1);
      expect(await decisions('keep')).to.equal(0);
      const serial = serialOf(await leafOf(web));
      expect(serial).not.to.equal(before.serial);
      expect((await read(web, 'tls.key')).equals(before.key)).to.equal(false);
      await remember(web);
      expect(await readlink(join(web.targetPath, '..data'))).not.to.equal(before.data);
      const status = await podStatus(web, 'web-cert');
      expect(status.metadata.resourceVersion).not.to.equal(before.status.metadata.resourceVersion);
      const versions = Object.fromEntries(status.status.objects.map((o) => [o.id, o.version]));
      expect(versions).to.deep.equal({ 'tls.crt': serial, 'tls.key': serial, 'ca.crt': sha256(oldCa.certPem) });
      expect((await verifies(await read(web, 'ca.crt'), await read(web, 'tls.crt'))).ok).to.equal(true);
    }
    expect(await mountsUnder(web.targetPath)).to.deep.equal([web.targetPath]);
  });

  it('a CA Secret changed to old + new CA: the republish writes the bundle of both (leaf still from the old CA); then ca.key = new: leaves from the new CA, both verify with the bundle', async () => {
    // Phase 1: the new CA joins ca.crt, ca.key stays the old CA's.
    await setCaSecret(web, caSecret([oldCa, newCa], oldCa));
    await stack.client.publish(await kubeletRequest(web));
    const bundle = await read(web, 'ca.crt');
    expect(bundle.toString('utf8')).to.equal(oldCa.certPem + newCa.certPem);
    expect((await leafOf(web)).issuer).to.equal('CN=go old CA');
    const oldLeaf = await read(web, 'tls.crt');
    await remember(web);
    const versions = Object.fromEntries(
      (await podStatus(web, 'web-cert')).status.objects.map((o) => [o.id, o.version]),
    );
    expect(versions['ca.crt']).to.equal(sha256(oldCa.certPem + newCa.certPem));

    // Phase 2: ca.key switches to the new CA.
    await setCaSecret(web, caSecret([oldCa, newCa], newCa));
    await stack.client.publish(await kubeletRequest(web));
    const leaf = await leafOf(web);
    expect(leaf.issuer).to.equal('CN=go new CA');
    expect(pemBlocks((await read(web, 'tls.crt')).toString('utf8'), 'CERTIFICATE')[1]).to.equal(newCa.certPem);
    expect((await read(web, 'ca.crt')).equals(bundle)).to.equal(true);
    await remember(web);
    expect((await podStatus(web, 'web-cert')).status.objects.find((o) => o.id === 'tls.crt')?.version).to.equal(
      serialOf(leaf),
    );
    const both = await read(web, 'ca.crt');
    for (const l of [oldLeaf, await read(web, 'tls.crt')]) {
      const result = await verifies(both, l);
      expect(result.ok, result.output).to.equal(true);
    }
    // And neither CA alone verifies the other's leaf: the bundle is what makes both work.
    expect((await verifies(oldCa.certPem, await read(web, 'tls.crt'))).ok).to.equal(false);
    expect((await verifies(newCa.certPem, oldLeaf)).ok).to.equal(false);
  });

  it('no nodePublishSecretRef: FAILED_PRECONDITION through the Go driver naming ca.crt and ca.key, nothing mounted, no pod status', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'no-ref', spc: 'web-cert' });
    const result = await failure(stack.client.publish(await pod.publishRequest()));
    expect(result.code).to.equal('FAILED_PRECONDITION');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/no-ref`)
      .and.include('pki provider: the nodePublishSecretRef has no ca.crt and ca.key');
    expectNoKeyMaterial(result.message);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'web-cert').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('an unknown template (${POD_IP}): INVALID_ARGUMENT naming commonName, no key material, nothing mounted', async () => {
    const pod = await podWithCa('bad-template', 'bad-template', caSecret([oldCa], oldCa));
    const result = await failure(stack.client.publish(await kubeletRequest(pod)));
    expect(result.code).to.equal('INVALID_ARGUMENT');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/bad-template`)
      .and.include('pki provider:')
      .and.include('commonName')
      .and.include('${POD_IP}');
    expectNoKeyMaterial(result.message);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'bad-template').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('a ca.key that belongs to no certificate of ca.crt: FAILED_PRECONDITION naming the keys, no key material, nothing mounted', async () => {
    const pod = await podWithCa('wrong-key', 'web-cert', caSecret([oldCa], newCa));
    const result = await failure(stack.client.publish(await kubeletRequest(pod)));
    expect(result.code).to.equal('FAILED_PRECONDITION');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/wrong-key`)
      .and.include('no certificate in nodePublishSecretRef ca.crt has the public key of ca.key');
    expectNoKeyMaterial(result.message);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'web-cert').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it("a CA Secret losing ca.key on a republish: the Go driver masks the provider's error (success) and the mounted files and pod status stay", async () => {
    const before = {
      crt: await read(web, 'tls.crt'),
      key: await read(web, 'tls.key'),
      data: await readlink(join(web.targetPath, '..data')),
      status: await podStatus(web, 'web-cert'),
    };
    await setCaSecret(web, { 'ca.crt': oldCa.certPem + newCa.certPem });
    const refused = await metric(CA_MISSING);
    await stack.client.publish(await kubeletRequest(web));
    // The provider did refuse (CaMissing); only the Go driver turned it into success.
    expect(await metric(CA_MISSING)).to.equal(refused + 1);
    expect((await read(web, 'tls.crt')).equals(before.crt)).to.equal(true);
    expect((await read(web, 'tls.key')).equals(before.key)).to.equal(true);
    expect(await readlink(join(web.targetPath, '..data'))).to.equal(before.data);
    const status = await podStatus(web, 'web-cert');
    expect(status.metadata.resourceVersion).to.equal(before.status.metadata.resourceVersion);
    expect(await mountsUnder(web.targetPath)).to.deep.equal([web.targetPath]);
  });

  it("neither the provider's nor the Go driver's log holds a CA key or an issued key", () => {
    const providerLog = stack.providers.get('pki')?.stderr() ?? '';
    expect(providerLog).to.include('certificate issued');
    for (const log of [providerLog, stack.driver.stderr()]) expectNoKeyMaterial(log);
  });

  it('unpublishes: the mount is gone', async () => {
    await stack.client.unpublish(web.volumeId, web.targetPath);
    expect(await mountsUnder(web.targetPath)).to.deep.equal([]);
  });
});
