import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { caSecret, makeTestCa, opensslDir, opensslText, opensslVerify } from '../support/pki-test-ca.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';

// The pki provider as its own process (`secrets-store-csi provider pki`), called over its
// socket as the driver calls it: files, modes and versions; an unchanged rotation answered
// with no files; a changed CA Secret issuing anew; errors as gRPC statuses with reasons;
// its flag checked at start; metrics on the health address.

const D = 24 * 3600;
const POD = {
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/serviceAccount.name': 'web-sa',
  'csi.storage.k8s.io/pod.uid': '1c8f5a55-4b1e-4c86-9d1e-0f3b5d0c7a21',
  'csi.storage.k8s.io/ephemeral': 'true',
  secretProviderClass: 'web-cert',
};
const CLASS = {
  commonName: '${POD_NAME}.${POD_NAMESPACE}',
  dnsNames: '${POD_NAME}.shop.svc',
  ipAddresses: '10.9.8.7',
  usages: 'server',
  duration: '48h',
  keyFilePermission: '0600',
};

const current = (res: MountResponse__Output) => Object.fromEntries(res.object_version.map((v) => [v.id, v.version]));
const fileOf = (res: MountResponse__Output, path: string) => {
  const f = res.files.find((x) => x.path === path);
  if (!f) throw new Error(`no ${path}`);
  return f;
};

describe('pki provider process', function () {
  this.timeout(60_000);
  const now = Math.floor(Date.now() / 1000);
  const oldCa = makeTestCa('old CA', 'EC-P256', now - 100 * D, now + 50 * D);
  const newCa = makeTestCa('new CA', 'RSA-2048', now - D, now + 500 * D);
  let provider: ProviderProcess;

  before(async () => {
    provider = await startProviderProcess('pki', ['--health-addr=127.0.0.1:0']);
  });
  after(async () => {
    await provider?.stop();
  });

  it('issues tls.crt (leaf + CA), tls.key and ca.crt with modes and serial/bundle versions; openssl verifies the chain', async () => {
    const res = await provider.mount({ ...POD, ...CLASS }, { secrets: caSecret([oldCa], oldCa) });
    expect(res.error).to.equal(null);
    expect(res.files.map((f) => [f.path, f.mode])).to.deep.equal([
      ['tls.crt', 0o644],
      ['tls.key', 0o600],
      ['ca.crt', 0o644],
    ]);
    const leaf = new X509Certificate(fileOf(res, 'tls.crt').contents);
    const serial = leaf.serialNumber.toLowerCase().padStart(40, '0');
    expect(current(res)).to.deep.include({ 'tls.crt': serial, 'tls.key': serial });
    expect(current(res)['ca.crt']).to.match(/^[0-9a-f]{64}$/);
    expect(leaf.subject).to.equal('CN=web-0.shop');
    expect(leaf.subjectAltName).to.equal('DNS:web-0.shop.svc, IP Address:10.9.8.7');
    const dir = await opensslDir();
    try {
      const verified = await opensslVerify(
        await dir.write('ca.crt', fileOf(res, 'ca.crt').contents),
        await dir.write('tls.crt', fileOf(res, 'tls.crt').contents),
        { purpose: 'sslserver' },
      );
      expect(verified.output).to.include(': OK');
      expect(await opensslText(await dir.write('tls.crt', fileOf(res, 'tls.crt').contents))).to.match(
        /Basic Constraints: critical\s+CA:FALSE/,
      );
    } finally {
      await dir.done();
    }
  });

  it('a rotation with nothing due answers no files and exactly the mounted versions; a changed CA Secret issues anew', async () => {
    const targetPath = '/var/lib/kubelet/pods/rot/volumes/v';
    const first = await provider.mount({ ...POD, ...CLASS }, { secrets: caSecret([oldCa], oldCa), targetPath });
    const again = await provider.mount(
      { ...POD, ...CLASS },
      { secrets: caSecret([oldCa], oldCa), targetPath, current: current(first) },
    );
    expect(again.files).to.deep.equal([]);
    expect(current(again)).to.deep.equal(current(first));
    // Another target with the same mounted versions has no rendering on record: it issues.
    const elsewhere = await provider.mount(
      { ...POD, ...CLASS },
      { secrets: caSecret([oldCa], oldCa), targetPath: `${targetPath}2`, current: current(first) },
    );
    expect(elsewhere.files.length).to.equal(3);
    // Phase 1 of a CA rotation: the bundle gains the new CA, the leaf is issued anew by the old one.
    const phase1 = await provider.mount(
      { ...POD, ...CLASS },
      { secrets: caSecret([oldCa, newCa], oldCa), targetPath, current: current(again) },
    );
    expect(fileOf(phase1, 'ca.crt').contents.toString()).to.equal(oldCa.certPem + newCa.certPem);
    expect(new X509Certificate(fileOf(phase1, 'tls.crt').contents).issuer).to.equal('CN=old CA');
    // Phase 2: ca.key is the new CA's: signed by it.
    const phase2 = await provider.mount(
      { ...POD, ...CLASS },
      { secrets: caSecret([oldCa, newCa], newCa), targetPath, current: current(phase1) },
    );
    expect(new X509Certificate(fileOf(phase2, 'tls.crt').contents).issuer).to.equal('CN=new CA');
    const dir = await opensslDir();
    try {
      const bundle = await dir.write('bundle.crt', fileOf(phase2, 'ca.crt').contents);
      expect(
        (await opensslVerify(bundle, await dir.write('new.crt', fileOf(phase2, 'tls.crt').contents))).output,
      ).to.include(': OK');
      expect(
        (await opensslVerify(bundle, await dir.write('old.crt', fileOf(phase1, 'tls.crt').contents))).output,
      ).to.include(': OK');
    } finally {
      await dir.done();
    }
    // An edited class (another duration) issues anew although nothing else changed.
    const edited = await provider.mount(
      { ...POD, ...CLASS, duration: '72h' },
      { secrets: caSecret([oldCa, newCa], newCa), targetPath, current: current(phase2) },
    );
    expect(edited.files.length).to.equal(3);
  });

  const failures: [string, Record<string, string>, Record<string, string> | undefined, string, RegExp][] = [
    [
      'no nodePublishSecretRef',
      CLASS,
      undefined,
      'FAILED_PRECONDITION',
      /^pki provider: the nodePublishSecretRef has no ca\.crt and ca\.key/,
    ],
    [
      'an empty ca.crt',
      CLASS,
      { 'ca.crt': '', 'ca.key': '' },
      'FAILED_PRECONDITION',
      /ca\.crt holds no PEM CERTIFICATE block/,
    ],
    [
      'an unknown template',
      { ...CLASS, commonName: '${NODE_NAME}' },
      caSecret([oldCa], oldCa),
      'INVALID_ARGUMENT',
      /commonName: unknown template variable "\$\{NODE_NAME\}"/,
    ],
    [
      'a duration below --min-duration',
      { ...CLASS, duration: '30m' },
      caSecret([oldCa], oldCa),
      'INVALID_ARGUMENT',
      /duration "30m" must be between 3600s \(--min-duration\)/,
    ],
    [
      'a bad IP address',
      { ...CLASS, ipAddresses: '10.0.0.300' },
      caSecret([oldCa], oldCa),
      'INVALID_ARGUMENT',
      /ipAddresses\[0\] "10.0.0.300"/,
    ],
  ];
  for (const [name, attributes, secrets, code, message] of failures) {
    it(`fails with ${code} for ${name}, no key material in the message`, async () => {
      const failure = await provider.mountError({ ...POD, ...attributes }, secrets === undefined ? {} : { secrets });
      expect(failure.code).to.equal(code);
      expect(failure.details).to.match(message);
      expect(failure.details).to.not.match(/PRIVATE KEY|-----BEGIN/);
    });
  }

  it('counts decisions and errors on /metrics', async () => {
    const metrics = await provider.metrics();
    expect(metrics.get('pki_mount_decisions_total{decision="keep"}')).to.be.at.least(1);
    expect(metrics.get('pki_mount_decisions_total{decision="first"}')).to.be.at.least(2);
    expect(metrics.get('pki_mount_decisions_total{decision="bundle-changed"}')).to.be.at.least(1);
    expect(metrics.get('pki_mount_decisions_total{decision="signer-changed"}')).to.be.at.least(1);
    expect(metrics.get('pki_mount_decisions_total{decision="rendering-changed"}')).to.be.at.least(2);
    expect(
      [...metrics.keys()].some((k) => k.startsWith('provider_mount_total') && k.includes('error_type="CaMissing"')),
    ).to.equal(true);
    expect(
      [...metrics.keys()].some(
        (k) => k.startsWith('provider_mount_total') && k.includes('error_type="InvalidParameters"'),
      ),
    ).to.equal(true);
  });

  it('refuses a bad --min-duration at start, naming the flag', async () => {
    const failed = await startProviderProcess('pki', ['--min-duration=0s']).then(
      async (p) => {
        await p.stop();
        return undefined;
      },
      (err: Error) => err,
    );
    expect(String(failed?.message)).to.match(/--min-duration must be between 1s and 8760h, got "0s"/);
  });
});
