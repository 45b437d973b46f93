import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ProviderMountRequest, ProviderMountResult } from '../../../../providers/framework/provider.js';
import { PkiMetrics } from '../../../../providers/pki/pki-metrics.js';
import { PkiProvider } from '../../../../providers/pki/pki-provider.js';
import { createLogger } from '../../../../lib/logging/logger.js';
import {
  caSecret,
  makeTestCa,
  opensslDir,
  opensslText,
  opensslVerify,
  type CaAlgorithm,
  type TestCa,
} from '../../../support/pki-test-ca.js';

// What the pki provider issues, checked by openssl (not by our own parser): the chain
// verifies to the CA for the usage asked, and `openssl x509 -text` shows the SANs, key
// usages, EKU, basic constraints and key identifiers, for every leaf key algorithm and
// every CA key type; then a two-phase CA rotation with the bundle. Time is injected.

const run = promisify(execFile);
const D = 24 * 3600;
const NOW = Math.floor(Date.now() / 1000);
const POD = {
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/serviceAccount.name': 'web-sa',
  'csi.storage.k8s.io/pod.uid': '6f1c1c8e-0d5e-4a4e-9d0c-2a1f4b1e9c11',
};
const logger = createLogger({ level: 'error', component: 'test' });

class Clock {
  constructor(public seconds: number) {}
  now = () => this.seconds * 1000;
}

function provider(clock: Clock): PkiProvider {
  return new PkiProvider({ minDurationSeconds: 3600 }, { metrics: new PkiMetrics(), now: clock.now });
}

function mount(
  p: PkiProvider,
  attributes: Record<string, string>,
  secrets: Record<string, string>,
  current: ProviderMountResult | undefined = undefined,
  permission = 0o644,
): Promise<ProviderMountResult> {
  const request: ProviderMountRequest = {
    attributes: { ...POD, ...attributes },
    secrets,
    targetPath: '/var/lib/kubelet/pods/p/volumes/v',
    permission,
    currentObjectVersions: new Map((current?.objectVersions ?? []).map((v) => [v.id, v.version])),
  };
  return p.mount(request, { signal: new AbortController().signal, logger });
}

function file(result: ProviderMountResult, path: string): Buffer {
  const f = result.files.find((x) => x.path === path);
  if (!f) throw new Error(`no ${path} in the answer`);
  return f.contents;
}

const colonHex = (b: Buffer) =>
  b
    .toString('hex')
    .toUpperCase()
    .replace(/(..)(?=.)/g, '$1:');

describe('pki certificates under openssl', function () {
  this.timeout(60_000);
  const cas = new Map<CaAlgorithm, TestCa>();
  for (const alg of ['EC-P256', 'EC-P384', 'RSA-2048', 'Ed25519'] as const)
    cas.set(alg, makeTestCa(`${alg} test CA`, alg, NOW - D, NOW + 400 * D));
  const signatureName: Record<CaAlgorithm, string> = {
    'EC-P256': 'ecdsa-with-SHA256',
    'EC-P384': 'ecdsa-with-SHA384',
    'RSA-2048': 'sha256WithRSAEncryption',
    Ed25519: 'ED25519',
  };
  const leafKeyText: Record<string, RegExp> = {
    'ECDSA-P256': /id-ecPublicKey[\s\S]*NIST CURVE: P-256/,
    'RSA-2048': /rsaEncryption[\s\S]*Public-Key: \(2048 bit\)/,
    'RSA-4096': /Public-Key: \(4096 bit\)/,
    Ed25519: /Public Key Algorithm: ED25519/,
  };
  const combos: [string, CaAlgorithm][] = [
    ['ECDSA-P256', 'EC-P256'],
    ['RSA-2048', 'EC-P256'],
    ['Ed25519', 'EC-P256'],
    ['RSA-4096', 'EC-P256'],
    ['ECDSA-P256', 'RSA-2048'],
    ['RSA-2048', 'RSA-2048'],
    ['Ed25519', 'RSA-2048'],
    ['ECDSA-P256', 'Ed25519'],
    ['RSA-2048', 'Ed25519'],
    ['Ed25519', 'Ed25519'],
    ['ECDSA-P256', 'EC-P384'],
  ];
  for (const [keyAlgorithm, caAlg] of combos) {
    it(`a ${keyAlgorithm} leaf from a ${caAlg} CA verifies and carries every extension`, async () => {
      const ca = cas.get(caAlg) as TestCa;
      const result = await mount(
        provider(new Clock(NOW)),
        {
          commonName: '${POD_NAME}.${POD_NAMESPACE}',
          keyAlgorithm,
          usages: 'server,client',
          duration: '48h',
          keyFilePermission: '0640',
          dnsNames: '${POD_NAME}.${POD_NAMESPACE}.svc,*.web.example',
          ipAddresses: '10.1.2.3,2001:db8::1',
          uris: 'spiffe://cluster.local/ns/${POD_NAMESPACE}/sa/${SERVICE_ACCOUNT_NAME}',
        },
        caSecret([ca], ca),
      );
      expect(result.files.map((f) => [f.path, f.mode])).to.deep.equal([
        ['tls.crt', 0o644],
        ['tls.key', 0o640],
        ['ca.crt', 0o644],
      ]);
      const dir = await opensslDir();
      try {
        const tlsCrt = await dir.write('tls.crt', file(result, 'tls.crt'));
        const caCrt = await dir.write('ca.crt', file(result, 'ca.crt'));
        const tlsKey = await dir.write('tls.key', file(result, 'tls.key'));
        for (const purpose of ['sslserver', 'sslclient']) {
          const verified = await opensslVerify(caCrt, tlsCrt, { purpose });
          expect(verified.output).to.include(': OK');
          expect(verified.ok).to.equal(true);
        }
        const text = await opensslText(tlsCrt);
        expect(text).to.include('Version: 3 (0x2)');
        expect(text).to.match(new RegExp(`Signature Algorithm: ${signatureName[caAlg]}`));
        expect(text).to.include(`Issuer: CN = ${caAlg} test CA`);
        expect(text).to.include('Subject: CN = web-0.shop');
        expect(text).to.match(leafKeyText[keyAlgorithm] as RegExp);
        expect(text).to.match(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
        expect(text).to.match(
          new RegExp(
            `X509v3 Key Usage: critical\\s+${keyAlgorithm.startsWith('RSA') ? 'Digital Signature, Key Encipherment' : 'Digital Signature'}\\n`,
          ),
        );
        expect(text).to.match(
          /X509v3 Extended Key Usage: \s+TLS Web Server Authentication, TLS Web Client Authentication/,
        );
        expect(text).to.include(
          'DNS:web-0.shop.svc, DNS:*.web.example, IP Address:10.1.2.3, IP Address:2001:DB8:0:0:0:0:0:1, URI:spiffe://cluster.local/ns/shop/sa/web-sa',
        );
        const leaf = new X509Certificate(file(result, 'tls.crt'));
        const spki = leaf.publicKey.export({ type: 'spki', format: 'der' });
        const caX509 = new X509Certificate(ca.certPem);
        const caText = await opensslText(await dir.write('ca-only.crt', ca.certPem));
        const caSki = /Subject Key Identifier: \s+([0-9A-F:]+)/.exec(caText)?.[1];
        expect(caSki).to.be.a('string');
        expect(text).to.match(new RegExp(`X509v3 Authority Key Identifier: \\s+(keyid:)?${caSki}`));
        const ski = /Subject Key Identifier: \s+([0-9A-F:]+)/.exec(text)?.[1];
        // RFC 5280 method 1 from the SPKI's BIT STRING, computed independently here.
        const spkiText = (
          await run('openssl', ['asn1parse', '-inform', 'DER', '-in', await dir.write('spki.der', spki)])
        ).stdout;
        const bitString = /^\s*(\d+):d=1\s+hl=(\d+) l=\s*(\d+) prim: BIT STRING/m.exec(spkiText);
        expect(bitString).to.not.equal(null);
        const [offset, header, length] = [Number(bitString?.[1]), Number(bitString?.[2]), Number(bitString?.[3])];
        const keyBits = spki.subarray(offset + header + 1, offset + header + length);
        expect(ski).to.equal(colonHex(createHash('sha1').update(keyBits).digest()));
        expect(leaf.checkIssued(caX509)).to.equal(true);
        // tls.chain = leaf then the CA; tls.key is PKCS#8 and matches the leaf.
        expect(file(result, 'tls.crt').toString()).to.match(
          /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/,
        );
        expect(file(result, 'tls.crt').toString()).to.include(ca.certPem);
        expect(file(result, 'tls.key').toString()).to.match(/^-----BEGIN PRIVATE KEY-----\n/);
        const keyPub = (await run('openssl', ['pkey', '-in', tlsKey, '-pubout'])).stdout;
        const certPub = (await run('openssl', ['x509', '-in', tlsCrt, '-noout', '-pubkey'])).stdout;
        expect(keyPub).to.equal(certPub);
        // Validity and serial as the version.
        const serialHex = leaf.serialNumber.toLowerCase().padStart(40, '0');
        expect(result.objectVersions).to.deep.equal([
          { id: 'tls.crt', version: serialHex },
          { id: 'tls.key', version: serialHex },
          { id: 'ca.crt', version: createHash('sha256').update(file(result, 'ca.crt')).digest('hex') },
        ]);
        expect(new Date(leaf.validFrom).getTime() / 1000).to.equal(NOW);
        expect(new Date(leaf.validTo).getTime() / 1000).to.equal(NOW + 2 * D);
      } finally {
        await dir.done();
      }
    });
  }

  it('usages: server only is serverAuth only (openssl refuses it as a client certificate); no SAN without names', async () => {
    const ca = cas.get('EC-P256') as TestCa;
    const result = await mount(provider(new Clock(NOW)), { commonName: 'only-server' }, caSecret([ca], ca));
    const dir = await opensslDir();
    try {
      const tlsCrt = await dir.write('tls.crt', file(result, 'tls.crt'));
      const caCrt = await dir.write('ca.crt', file(result, 'ca.crt'));
      expect((await opensslVerify(caCrt, tlsCrt, { purpose: 'sslserver' })).ok).to.equal(true);
      const asClient = await opensslVerify(caCrt, tlsCrt, { purpose: 'sslclient' });
      expect(asClient.ok).to.equal(false);
      expect(asClient.output).to.match(/error 26 at 0 depth lookup: unsuitable certificate purpose/);
      const text = await opensslText(tlsCrt);
      expect(text).to.match(/Extended Key Usage: \s+TLS Web Server Authentication\n/);
      expect(text).to.not.include('Subject Alternative Name');
    } finally {
      await dir.done();
    }
  });

  it('a CA made by openssl itself (its own SKI/AKI layout) signs leaves openssl verifies', async () => {
    const dir = await opensslDir();
    try {
      await run('openssl', [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir.dir, 'ca.key'),
        '-out',
        join(dir.dir, 'ca.pem'),
        '-days',
        '30',
        '-subj',
        '/O=Example Org/CN=openssl CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      const secrets = {
        'ca.crt': await readFile(join(dir.dir, 'ca.pem'), 'utf8'),
        'ca.key': await readFile(join(dir.dir, 'ca.key'), 'utf8'),
      };
      const result = await mount(
        provider(new Clock(Math.floor(Date.now() / 1000))),
        { commonName: 'web', dnsNames: 'web.example' },
        secrets,
      );
      const verified = await opensslVerify(
        join(dir.dir, 'ca.pem'),
        await dir.write('tls.crt', file(result, 'tls.crt')),
      );
      expect(verified.output).to.include(': OK');
      expect(await opensslText(join(dir.dir, 'tls.crt'))).to.include('Issuer: O = Example Org, CN = openssl CA');
    } finally {
      await dir.done();
    }
  });

  it("a leaf never outlives its CA: notAfter is the CA's when the duration reaches past it", async () => {
    const shortCa = makeTestCa('short CA', 'EC-P256', NOW - D, NOW + 2 * D);
    const result = await mount(
      provider(new Clock(NOW)),
      { commonName: 'x', duration: '720h' },
      caSecret([shortCa], shortCa),
    );
    expect(new Date(new X509Certificate(file(result, 'tls.crt')).validTo).getTime() / 1000).to.equal(NOW + 2 * D);
  });
});

describe('pki two-phase CA rotation under openssl', function () {
  this.timeout(60_000);
  it('the bundle holds old and new CA, leaves of both verify with it, the expired old CA leaves it', async () => {
    const oldCa = makeTestCa('old CA', 'EC-P256', NOW - 300 * D, NOW + 20 * D);
    const newCa = makeTestCa('new CA', 'Ed25519', NOW - D, NOW + 700 * D);
    const clock = new Clock(NOW);
    const p = provider(clock);
    const attrs = { commonName: 'web', dnsNames: 'web.example', duration: '720h' };
    const dir = await opensslDir();
    try {
      // Before: only the old CA.
      const before = await mount(p, attrs, caSecret([oldCa], oldCa));
      expect(file(before, 'ca.crt').toString()).to.equal(oldCa.certPem);
      // Nothing changed an hour later: no files, the mounted versions.
      clock.seconds += 3600;
      const unchanged = await mount(p, attrs, caSecret([oldCa], oldCa), before);
      expect(unchanged.files).to.deep.equal([]);
      expect(unchanged.objectVersions).to.deep.equal(before.objectVersions);

      // Phase 1: the new CA joins ca.crt, ca.key stays the old one: bundle of both, leaf still from the old CA.
      const phase1 = await mount(p, attrs, caSecret([oldCa, newCa], oldCa), before);
      expect(phase1.files.length).to.equal(3);
      expect(file(phase1, 'ca.crt').toString()).to.equal(oldCa.certPem + newCa.certPem);
      expect(new X509Certificate(file(phase1, 'tls.crt')).issuer).to.equal('CN=old CA');
      const bundle1 = await dir.write('bundle1.crt', file(phase1, 'ca.crt'));
      const leaf1 = await dir.write('leaf1.crt', file(phase1, 'tls.crt'));
      expect((await opensslVerify(bundle1, leaf1, { at: clock.seconds })).output).to.include(': OK');

      // Phase 2: ca.key switches to the new CA: a new leaf signed by it; the old leaf still verifies with the bundle.
      clock.seconds += 3600;
      const phase2 = await mount(p, attrs, caSecret([oldCa, newCa], newCa), phase1);
      expect(new X509Certificate(file(phase2, 'tls.crt')).issuer).to.equal('CN=new CA');
      expect(file(phase2, 'ca.crt').toString()).to.equal(oldCa.certPem + newCa.certPem);
      const bundle2 = await dir.write('bundle2.crt', file(phase2, 'ca.crt'));
      const leaf2 = await dir.write('leaf2.crt', file(phase2, 'tls.crt'));
      expect((await opensslVerify(bundle2, leaf2, { at: clock.seconds })).output).to.include(': OK');
      expect((await opensslVerify(bundle2, leaf1, { at: clock.seconds })).output).to.include(': OK');
      // The new leaf does not verify against the old CA alone (the bundle is needed).
      expect(
        (await opensslVerify(await dir.write('old.crt', oldCa.certPem), leaf2, { at: clock.seconds })).ok,
      ).to.equal(false);
      // Phase 2 again: nothing to do.
      expect((await mount(p, attrs, caSecret([oldCa, newCa], newCa), phase2)).files).to.deep.equal([]);

      // Phase 3: the old CA expired (still listed in ca.crt): it leaves the bundle, the leaf is issued anew.
      clock.seconds = NOW + 20 * D;
      const phase3 = await mount(p, attrs, caSecret([oldCa, newCa], newCa), phase2);
      expect(file(phase3, 'ca.crt').toString()).to.equal(newCa.certPem);
      const bundle3 = await dir.write('bundle3.crt', file(phase3, 'ca.crt'));
      expect(
        (await opensslVerify(bundle3, await dir.write('leaf3.crt', file(phase3, 'tls.crt')), { at: clock.seconds }))
          .output,
      ).to.include(': OK');
      expect((await opensslVerify(bundle3, leaf1, { at: clock.seconds - 3600 })).ok).to.equal(false);
    } finally {
      await dir.done();
    }
  });

  it('renewal: a 24h certificate is kept until 19.2h, then issued anew with a new serial', async () => {
    const ca = makeTestCa('CA', 'EC-P256', NOW - D, NOW + 400 * D);
    const clock = new Clock(NOW);
    const p = provider(clock);
    const first = await mount(p, { commonName: 'web' }, caSecret([ca], ca));
    clock.seconds = NOW + Math.floor(0.8 * D) - 1;
    expect((await mount(p, { commonName: 'web' }, caSecret([ca], ca), first)).files).to.deep.equal([]);
    clock.seconds = NOW + Math.floor(0.8 * D);
    const renewed = await mount(p, { commonName: 'web' }, caSecret([ca], ca), first);
    expect(renewed.files.length).to.equal(3);
    expect(renewed.objectVersions[0]?.version).to.not.equal(first.objectVersions[0]?.version);
    expect(new Date(new X509Certificate(file(renewed, 'tls.crt')).validFrom).getTime() / 1000).to.equal(clock.seconds);
    // An edited class issues anew at once, whatever the renewal point.
    const edited = await mount(p, { commonName: 'web', dnsNames: 'web.example' }, caSecret([ca], ca), renewed);
    expect(edited.files.length).to.equal(3);
  });
});
