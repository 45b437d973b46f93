import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { SscError } from '../../../../lib/errors.js';
import { certificatePem, loadCa } from '../../../../providers/pki/ca.js';
import { basicConstraints, buildCertificate, encodeCommonName } from '../../../../lib/asn1/x509-builder.js';
import { caSecret, makeTestCa } from '../../../support/pki-test-ca.js';

// CA loading from the nodePublishSecretRef: which certificate signs (the one whose public
// key is ca.key's), and the bundle (every certificate of ca.crt not yet expired).

const D = 24 * 3600;
const NOW = 1_800_000_000;

function refusal(secrets: Record<string, string>, now = NOW): SscError {
  try {
    loadCa(secrets, now);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    const e = err as SscError;
    expect(e.kind).to.equal('failed-precondition');
    expect(e.message).to.not.match(/PRIVATE KEY|MII|-----/);
    return e;
  }
  throw new Error('expected the CA to be refused');
}

describe('pki CA loading', () => {
  const oldCa = makeTestCa('old CA', 'EC-P256', NOW - 300 * D, NOW + 5 * D);
  const newCa = makeTestCa('new CA', 'EC-P256', NOW - D, NOW + 365 * D);
  const pemOf = (bundle: Buffer) => bundle.toString('latin1');

  it('one CA: it signs and is the bundle', () => {
    const ca = loadCa(caSecret([newCa], newCa), NOW);
    expect(ca.signer.der.equals(newCa.der)).to.equal(true);
    expect(pemOf(ca.bundle)).to.equal(newCa.certPem);
    expect(ca.signerTag).to.match(/^[0-9a-f]{8}$/);
    expect(ca.bundleVersion).to.match(/^[0-9a-f]{64}$/);
  });

  const selection: [string, Record<string, string>, string][] = [
    ['phase 1: old and new in ca.crt, ca.key old → old signs', caSecret([oldCa, newCa], oldCa), 'old CA'],
    ['phase 2: ca.key new → new signs', caSecret([oldCa, newCa], newCa), 'new CA'],
    ['the signer may come second or first', caSecret([newCa, oldCa], oldCa), 'old CA'],
  ];
  for (const [name, secrets, signer] of selection) {
    it(name, () => {
      const ca = loadCa(secrets, NOW);
      expect(ca.signer.x509.subject).to.equal(`CN=${signer}`);
      expect(pemOf(ca.bundle)).to.equal(secrets['ca.crt']);
    });
  }

  it('the bundle keeps ca.crt order, drops duplicates, and its version follows its content', () => {
    const a = loadCa({ 'ca.crt': oldCa.certPem + newCa.certPem + oldCa.certPem, 'ca.key': newCa.keyPem }, NOW);
    expect(pemOf(a.bundle)).to.equal(oldCa.certPem + newCa.certPem);
    const b = loadCa(caSecret([newCa, oldCa], newCa), NOW);
    expect(b.bundleVersion).to.not.equal(a.bundleVersion);
    expect(b.signerTag).to.equal(a.signerTag);
  });

  it('an expired old CA leaves the bundle; the bundle version changes with it', () => {
    const before = loadCa(caSecret([oldCa, newCa], newCa), NOW + 5 * D - 1);
    const after = loadCa(caSecret([oldCa, newCa], newCa), NOW + 5 * D);
    expect(pemOf(before.bundle)).to.equal(oldCa.certPem + newCa.certPem);
    expect(pemOf(after.bundle)).to.equal(newCa.certPem);
    expect(after.bundleVersion).to.not.equal(before.bundleVersion);
  });

  it('a CA certificate renewed with the same key: the valid one with the latest notAfter signs', () => {
    const first = makeTestCa('CA', 'EC-P256', NOW - 100 * D, NOW + 10 * D);
    const renewed = makeTestCa('CA', 'EC-P256', NOW - D, NOW + 200 * D, first.key);
    const notYet = makeTestCa('CA', 'EC-P256', NOW + D, NOW + 400 * D, first.key);
    const ca = loadCa(caSecret([first, renewed, notYet], first), NOW);
    expect(ca.signer.der.equals(renewed.der)).to.equal(true);
  });

  for (const alg of ['EC-P384', 'RSA-2048', 'Ed25519'] as const) {
    it(`a ${alg} CA signs`, () => {
      const ca = makeTestCa(`${alg} CA`, alg, NOW - D, NOW + D);
      expect(loadCa(caSecret([ca], ca), NOW).signer.x509.subject).to.equal(`CN=${alg} CA`);
    });
  }

  const refusals: [string, () => Record<string, string>, string, RegExp][] = [
    ['no ca.crt', () => ({ 'ca.key': newCa.keyPem }), 'CaMissing', /nodePublishSecretRef has no ca.crt \(/],
    ['no ca.key', () => ({ 'ca.crt': newCa.certPem }), 'CaMissing', /has no ca.key/],
    ['neither', () => ({}), 'CaMissing', /has no ca.crt and ca.key/],
    [
      'ca.crt without a certificate',
      () => ({ 'ca.crt': 'hello', 'ca.key': newCa.keyPem }),
      'CaInvalid',
      /ca.crt holds no PEM CERTIFICATE block/,
    ],
    [
      'a broken certificate',
      () => ({ 'ca.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'ca.key': newCa.keyPem }),
      'CaInvalid',
      /certificate 1 is not a valid X.509 certificate/,
    ],
    [
      'ca.key no key',
      () => ({ 'ca.crt': newCa.certPem, 'ca.key': newCa.certPem }),
      'CaInvalid',
      /ca.key is not an unencrypted PEM private key/,
    ],
    [
      'an encrypted ca.key',
      () => ({
        'ca.crt': newCa.certPem,
        'ca.key': newCa.key
          .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' })
          .toString(),
      }),
      'CaInvalid',
      /not an unencrypted PEM private key/,
    ],
    [
      'ca.key of no certificate in ca.crt',
      () => ({ 'ca.crt': oldCa.certPem, 'ca.key': newCa.keyPem }),
      'CaInvalid',
      /no certificate in nodePublishSecretRef ca.crt has the public key of ca.key/,
    ],
    [
      'an X25519 ca.key',
      () => ({
        'ca.crt': newCa.certPem,
        'ca.key': generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      }),
      'CaInvalid',
      /ca.key: x25519 keys cannot sign certificates/,
    ],
    [
      'a secp256k1 ca.key',
      () => ({
        'ca.crt': newCa.certPem,
        'ca.key': generateKeyPairSync('ec', { namedCurve: 'secp256k1' })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
      }),
      'CaInvalid',
      /curve secp256k1 cannot sign/,
    ],
    [
      'an expired signer',
      () => caSecret([oldCa, newCa], oldCa),
      'CaExpired',
      /the CA certificate for ca.key expired at 2027-01-20T08:00:00.000Z/,
    ],
  ];
  for (const [name, secrets, reason, message] of refusals) {
    it(`refuses ${name}`, () => {
      const e = refusal(secrets(), name === 'an expired signer' ? NOW + 6 * D : NOW);
      expect(e.reason).to.equal(reason);
      expect(e.message).to.match(message);
    });
  }

  it('refuses a signer not valid yet, and a signer that is no CA', () => {
    const future = makeTestCa('future CA', 'EC-P256', NOW + D, NOW + 9 * D);
    expect(refusal(caSecret([future], future)).message).to.match(/is not valid before 2027-01-16T08:00:00.000Z/);
    const leafLike = makeTestCa('not a CA', 'EC-P256', NOW - D, NOW + D);
    // A self-signed certificate with basicConstraints CA:FALSE for the same key.
    const der = buildCertificate(
      {
        serial: Buffer.from([1]),
        issuer: encodeCommonName('x'),
        subject: encodeCommonName('x'),
        notBefore: new Date((NOW - D) * 1000),
        notAfter: new Date((NOW + D) * 1000),
        publicKey: leafLike.key,
        extensions: [basicConstraints(false)],
      },
      leafLike.key,
    );
    const e = refusal({ 'ca.crt': certificatePem(der).toString('latin1'), 'ca.key': leafLike.keyPem });
    expect(e.reason).to.equal('CaInvalid');
    expect(e.message).to.match(/is not a CA \(it needs basicConstraints CA:TRUE\)/);
  });
});
