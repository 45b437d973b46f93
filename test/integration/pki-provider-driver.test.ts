import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { rotationRoundsSince, startDriverStack, whenDriverLogs, type DriverStack } from '../support/driver-stack.js';
import { caSecret, makeTestCa, opensslDir, opensslVerify, type TestCa } from '../support/pki-test-ca.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';

// The pki provider process behind our real driver process (local mode: classes from
// --spc-dir, tmpfs targets when root), rotation every second. What is checked: a publish
// writes tls.crt, tls.key and ca.crt with their modes and .metadata/ versions (the serial,
// the bundle digest) and openssl verifies the chain; rotation rounds with nothing due
// rewrite nothing (the provider answers no files); a 10 s certificate (--min-duration=1s)
// is renewed by rotation at its renewal point (8 s) and not before; a two-phase CA rotation
// (new Secret data by publishing the volume anew), after which the old CA, expiring,
// drops out of the bundle by rotation alone. Waits are on the driver's log lines.

const CLASSES = {
  'pki-web.yaml': `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: pki-web
  namespace: shop
spec:
  provider: pki
  parameters:
    commonName: "\${POD_NAME}.\${POD_NAMESPACE}"
    dnsNames: "\${POD_NAME}.web.\${POD_NAMESPACE}.svc"
    usages: "server,client"
    duration: 1h
    keyFilePermission: "0640"
`,
  'pki-short.yaml': `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: pki-short
  namespace: shop
spec:
  provider: pki
  parameters:
    commonName: "\${POD_NAME}"
    keyAlgorithm: Ed25519
    duration: 10s
`,
};

interface VersionsJson {
  readonly objects: readonly { readonly id: string; readonly version: string }[];
}

describe('pki provider behind the real driver (local mode, rotation)', function () {
  this.timeout(180_000);
  const D = 24 * 3600;
  const start = Math.floor(Date.now() / 1000);
  const steadyCa = makeTestCa('steady CA', 'EC-P256', start - D, start + 400 * D);
  let stack: DriverStack;
  let provider: ProviderProcess;

  const roundsSince = (since: number) => rotationRoundsSince(stack, since);
  const readVersions = async (target: string) =>
    (JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as VersionsJson).objects;
  const versionOf = async (target: string, id: string) =>
    (await readVersions(target)).find((o) => o.id === id)?.version;
  const leafOf = async (target: string) => new X509Certificate(await readFile(join(target, 'tls.crt')));
  const publish = (target: string, spc: string, pod: string, secrets: Record<string, string>) =>
    stack.client.publish({ ...stack.request(target, spc, pod, 'shop'), secrets });

  /**
   * Kubelet's republish with the CA Secret's new data, as kubelet sends it (requiresRepublish):
   * skipped as fresh within the rotation interval, its request is still what the next
   * rotation round refreshes with (local mode keeps it in memory).
   */
  async function republishWith(target: string, secrets: Record<string, string>): Promise<void> {
    await publish(target, 'pki-web', 'rot-0', secrets);
  }

  async function verifies(bundle: Buffer | string, leaf: Buffer | string): Promise<boolean> {
    const dir = await opensslDir();
    try {
      return (await opensslVerify(await dir.write('bundle.crt', bundle), await dir.write('leaf.crt', leaf))).ok;
    } finally {
      await dir.done();
    }
  }

  before(async () => {
    stack = await startDriverStack({
      classes: CLASSES,
      driverArgs: [
        '--enable-secret-rotation',
        '--rotation-poll-interval=1s',
        '--provider-timeout=10s',
        '--log-level=info',
      ],
    });
    provider = await startProviderProcess(
      'pki',
      ['--health-addr=127.0.0.1:0', '--min-duration=1s'],
      {},
      { providersDir: stack.providersDir },
    );
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
  });

  it('publish: tls.crt (leaf + CA), tls.key (0640), ca.crt, versions the serial and the bundle digest; openssl verifies', async () => {
    const target = stack.targetPath('web-0');
    await publish(target, 'pki-web', 'web-0', caSecret([steadyCa], steadyCa));
    const leaf = await leafOf(target);
    expect(leaf.subject).to.equal('CN=web-0.shop');
    expect(leaf.subjectAltName).to.equal('DNS:web-0.web.shop.svc');
    expect((await stat(join(target, 'tls.key'))).mode & 0o777).to.equal(0o640);
    expect((await stat(join(target, 'tls.crt'))).mode & 0o777).to.equal(0o644);
    expect(await readFile(join(target, 'ca.crt'), 'utf8')).to.equal(steadyCa.certPem);
    const serial = leaf.serialNumber.toLowerCase().padStart(40, '0');
    expect((await readVersions(target)).map((o) => o.id).sort()).to.deep.equal(['ca.crt', 'tls.crt', 'tls.key']);
    expect(await versionOf(target, 'tls.crt')).to.equal(serial);
    expect(await versionOf(target, 'tls.key')).to.equal(serial);
    expect(await verifies(await readFile(join(target, 'ca.crt')), await readFile(join(target, 'tls.crt')))).to.equal(
      true,
    );
  });

  it('rotation rounds with nothing due keep the files: same serial, same bytes, the provider answered "keep"', async () => {
    const target = stack.targetPath('web-0');
    const before = await readFile(join(target, 'tls.crt'));
    const keptBefore = (await provider.metrics()).get('pki_mount_decisions_total{decision="keep"}') ?? 0;
    const since = Date.now();
    await whenDriverLogs(stack, 'three rotation rounds', () => roundsSince(since) >= 3);
    expect((await readFile(join(target, 'tls.crt'))).equals(before)).to.equal(true);
    expect((await provider.metrics()).get('pki_mount_decisions_total{decision="keep"}')).to.be.at.least(keptBefore + 2);
  });

  it('a 10 s certificate is renewed by rotation at its renewal point (8 s), with a new key and serial', async () => {
    const target = stack.targetPath('short-0');
    await publish(target, 'pki-short', 'short-0', caSecret([steadyCa], steadyCa));
    const first = await leafOf(target);
    const firstKey = await readFile(join(target, 'tls.key'), 'utf8');
    const firstSerial = await versionOf(target, 'tls.crt');
    const renewedSerial = await whenDriverLogs(
      stack,
      'a renewal',
      async () => {
        const v = await versionOf(target, 'tls.crt');
        return v !== firstSerial ? v : undefined;
      },
      30_000,
    );
    const renewed = await leafOf(target);
    expect(renewedSerial).to.equal(renewed.serialNumber.toLowerCase().padStart(40, '0'));
    const issuedAfter = (Date.parse(renewed.validFrom) - Date.parse(first.validFrom)) / 1000;
    expect(issuedAfter, 'seconds between the two certificates').to.be.at.least(8);
    expect(issuedAfter).to.be.below(20);
    expect(await readFile(join(target, 'tls.key'), 'utf8')).to.not.equal(firstKey);
    expect(renewed.publicKey.asymmetricKeyType).to.equal('ed25519');
    expect((await provider.metrics()).get('pki_mount_decisions_total{decision="due"}')).to.be.at.least(1);
  });

  it('two-phase CA rotation (bundle of both, leaves of both CAs verify), then the expiring old CA leaves the bundle by rotation alone', async () => {
    const now = Math.floor(Date.now() / 1000);
    // The old CA expires 20 s from now; its leaves are cut to that.
    const oldCa: TestCa = makeTestCa('old CA', 'EC-P256', now - 100 * D, now + 20);
    const newCa: TestCa = makeTestCa('new CA', 'Ed25519', now - 60, now + 400 * D);
    const target = stack.targetPath('rot-0');
    await publish(target, 'pki-web', 'rot-0', caSecret([oldCa], oldCa));
    expect((await leafOf(target)).issuer).to.equal('CN=old CA');

    // Phase 1: the new CA joins the Secret's ca.crt (ca.key stays the old CA's): bundle of
    // both, leaf still from the old CA. In local mode the changed Secret reaches the driver
    // with kubelet's republish; skipped as fresh, it is the next rotation round that uses
    // it (in Kubernetes mode the driver reads the Secret itself each round).
    await republishWith(target, caSecret([oldCa, newCa], oldCa));
    await whenDriverLogs(
      stack,
      'the new CA to join the bundle',
      async () => (await readFile(join(target, 'ca.crt'), 'utf8')) === oldCa.certPem + newCa.certPem,
    );
    expect((await leafOf(target)).issuer).to.equal('CN=old CA');
    const oldLeaf = await readFile(join(target, 'tls.crt'));

    // Phase 2: ca.key is the new CA's: the leaf is signed by it; both leaves verify with the volume's bundle.
    await republishWith(target, caSecret([oldCa, newCa], newCa));
    await whenDriverLogs(stack, 'a leaf of the new CA', async () => (await leafOf(target)).issuer === 'CN=new CA');
    expect(await readFile(join(target, 'ca.crt'), 'utf8')).to.equal(oldCa.certPem + newCa.certPem);
    const bundle = await readFile(join(target, 'ca.crt'));
    expect(await verifies(bundle, await readFile(join(target, 'tls.crt')))).to.equal(true);
    expect(await verifies(bundle, oldLeaf)).to.equal(true);
    // Rounds with nothing due keep that leaf (the provider answers no files).
    const kept = await readFile(join(target, 'tls.crt'));
    const since = Date.now();
    await whenDriverLogs(stack, 'two rotation rounds', () => roundsSince(since) >= 2);
    expect((await readFile(join(target, 'tls.crt'))).equals(kept)).to.equal(true);

    // The old CA expires (still in the Secret's ca.crt): rotation drops it from the bundle.
    await whenDriverLogs(
      stack,
      'the old CA to leave the bundle',
      async () => (await readFile(join(target, 'ca.crt'), 'utf8')) === newCa.certPem,
      60_000,
    );
    expect((await leafOf(target)).issuer).to.equal('CN=new CA');
    expect(await verifies(await readFile(join(target, 'ca.crt')), await readFile(join(target, 'tls.crt')))).to.equal(
      true,
    );
    expect((await provider.metrics()).get('pki_mount_decisions_total{decision="bundle-changed"}')).to.be.at.least(1);
  });
});
