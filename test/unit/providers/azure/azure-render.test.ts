import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { jwkToPublicKeyPem, type PublicJwk } from '../../../../providers/azure/jwk-pem.js';
import { decodeObjectEncoding } from '../../../../providers/azure/object-encoding.js';
import { parseKeyVaultObjects, type KeyVaultObject } from '../../../../providers/azure/objects.js';
import {
  describeObject,
  renderCertificate,
  renderKey,
  renderSecret,
  type RenderOptions,
} from '../../../../providers/azure/render.js';
import { JWK_SPKI_FIXTURES } from '../../../support/jwk-spki-fixtures.js';

// objectEncoding (Go's base64.StdEncoding / hex.DecodeString), key and cert objects
// (x509.MarshalPKIXPublicKey + pem.EncodeToMemory) compared with openssl's output,
// which writes the same DER and the same 64-column PEM.

function kvObject(body: string): KeyVaultObject {
  const yaml = `array:\n  - |\n${body
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
  return parseKeyVaultObjects(yaml).objects[0] as KeyVaultObject;
}
const OPTIONS: RenderOptions = { constructPemChain: true, writeCertAndKeyInSeparateFiles: false };

function thrown(f: () => unknown): SscError {
  try {
    f();
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    return err as SscError;
  }
  throw new Error('expected an error');
}

function jwkOf(key: KeyObject): PublicJwk {
  const j = key.export({ format: 'jwk' });
  const bytes = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64url'));
  return { kty: j.kty, n: bytes(j.n), e: bytes(j.e), crv: j.crv, x: bytes(j.x), y: bytes(j.y) };
}

function opensslPublicPem(key: KeyObject): string {
  return execFileSync('openssl', ['pkey', '-pubout'], {
    input: key.export({ type: 'pkcs8', format: 'pem' }),
  }).toString();
}

describe('azure objectEncoding (Go base64.StdEncoding, hex.DecodeString)', () => {
  const ok: [string, 'utf-8' | 'base64' | 'hex', Buffer][] = [
    ['héllo ✓', 'utf-8', Buffer.from('héllo ✓', 'utf8')],
    ['aGVsbG8=', 'base64', Buffer.from('hello')],
    ['00ff7F', 'hex', Buffer.from([0, 255, 127])],
  ];
  for (const [value, encoding, bytes] of ok) {
    it(`${encoding} ${JSON.stringify(value)}`, () =>
      expect(decodeObjectEncoding(value, encoding, 'secret "s"').equals(bytes)).to.equal(true));
  }
  // Which texts decode is framework go-encoding.ts's (its tests); here: the message says why, never the value.
  const bad: [string, 'base64' | 'hex', RegExp][] = [
    ['aGVs bG8=', 'base64', /not valid base64 \(Go base64.StdEncoding: padded standard alphabet only\)/],
    ['abc', 'hex', /not valid hex \(odd length\)/],
    ['zz', 'hex', /not valid hex \(a character that is not a hex digit\)/],
  ];
  for (const [value, encoding, message] of bad) {
    it(`refuses ${encoding} ${JSON.stringify(value)} without showing it`, () => {
      const e = thrown(() => decodeObjectEncoding(value, encoding, 'secret "s"'));
      expect([e.kind, e.reason]).to.deep.equal(['invalid-argument', 'InvalidSecretEncoding']);
      expect(e.message).to.match(message).and.include('secret "s"');
      expect(e.message).to.not.include(value);
    });
  }

  it('a secret object decodes its value; a plain secret is never treated as a certificate', () => {
    const o = kvObject('objectName: s\nobjectType: secret\nobjectEncoding: hex');
    expect(
      renderSecret(
        o,
        { value: '6869', contentType: 'application/x-pkcs12', certificateBacked: false },
        OPTIONS,
        describeObject(o, 'v1'),
      ),
    ).to.deep.equal([{ suffix: '', bytes: Buffer.from('hi') }]);
    expect(describeObject(o, 'v1')).to.equal('secret "s" (version "v1")');
  });
});

describe('azure key objects: JWK → PUBLIC KEY PEM (Go x509.MarshalPKIXPublicKey)', () => {
  const keys: [string, KeyObject][] = [
    ['RSA 2048', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
    ['RSA 3072, e=3', generateKeyPairSync('rsa', { modulusLength: 3072, publicExponent: 3 }).privateKey],
    ['EC P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey],
    ['EC P-384', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
    ['EC P-521', generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey],
  ];
  for (const [name, key] of keys) {
    it(`${name}: the same bytes as openssl pkey -pubout`, () => {
      const jwk = jwkOf(key);
      const expected = opensslPublicPem(key);
      expect(renderKey(jwk, 'key "k"')[0]?.bytes.toString()).to.equal(expected);
      // The -HSM key types are the same JWK.
      expect(jwkToPublicKeyPem({ ...jwk, kty: `${jwk.kty}-HSM` }, 'key "k"').toString()).to.equal(expected);
    });
  }

  it('leading zeros in n, x and y do not change the output (big.Int, elliptic.Marshal padding)', () => {
    const rsa = keys[0]?.[1] as KeyObject;
    const jwk = jwkOf(rsa);
    expect(
      jwkToPublicKeyPem({ ...jwk, n: Buffer.concat([Buffer.alloc(1), Buffer.from(jwk.n ?? [])]) }, 'k').toString(),
    ).to.equal(opensslPublicPem(rsa));
    let ec: KeyObject | undefined;
    for (let i = 0; i < 5000 && ec === undefined; i++) {
      const k = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      if (jwkOf(k).x?.[0] === 0) ec = k;
    }
    expect(ec, 'a P-256 key whose x starts with a zero byte').to.not.equal(undefined);
    const ecJwk = jwkOf(ec as KeyObject);
    expect(jwkToPublicKeyPem({ ...ecJwk, x: Buffer.from(ecJwk.x ?? []).subarray(1) }, 'k').toString()).to.equal(
      opensslPublicPem(ec as KeyObject),
    );
  });

  // The bytes the hand-built DER encoder wrote before node:crypto took over, for fixed keys
  // and the inputs openssl cannot be given (leading zeros, absent fields, the x = 0 point).
  for (const [name, jwk, der] of JWK_SPKI_FIXTURES) {
    it(`${name}: the bytes of the former DER encoder`, () => {
      const lines =
        Buffer.from(der, 'base64')
          .toString('base64')
          .match(/.{1,64}/g) ?? [];
      expect(jwkToPublicKeyPem(jwk, 'key "k"').toString()).to.equal(
        `-----BEGIN PUBLIC KEY-----\n${lines.join('\n')}\n-----END PUBLIC KEY-----\n`,
      );
    });
  }

  it('random RSA-2048, P-256, P-384 and P-521 keys: the same bytes as openssl pkey -pubout', function () {
    this.timeout(30_000);
    for (let i = 0; i < 6; i++) {
      for (const key of [
        generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
        generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
        generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
      ]) {
        expect(jwkToPublicKeyPem(jwkOf(key), 'key "k"').toString()).to.equal(opensslPublicPem(key));
      }
    }
  });

  const refused: [string, PublicJwk, RegExp][] = [
    ['a symmetric key', { kty: 'oct' }, /key type "oct" is not supported \(RSA, RSA-HSM, EC and EC-HSM are\)/],
    [
      'secp256k1',
      { kty: 'EC', crv: 'P-256K', x: Buffer.alloc(32, 1), y: Buffer.alloc(32, 2) },
      /curve "P-256K" is not supported/,
    ],
    [
      'a point off the curve',
      { kty: 'EC', crv: 'P-256', x: Buffer.alloc(32, 1), y: Buffer.alloc(32, 2) },
      /the key's point is not on P-256/,
    ],
    [
      'a coordinate too long for the curve',
      { kty: 'EC', crv: 'P-256', x: Buffer.alloc(33, 1), y: Buffer.alloc(32, 2) },
      /not on P-256/,
    ],
    [
      'an exponent past int64',
      { kty: 'RSA', n: Buffer.alloc(256, 0xc5), e: Buffer.alloc(9, 1) },
      /exponent is larger than 2\^63/,
    ],
    // node:crypto would write these exponents; 2^63 - 1 is still accepted (jwk-spki-fixtures).
    [
      'an exponent of exactly 2^63',
      { kty: 'RSA', n: Buffer.alloc(256, 0xc5), e: Buffer.from('8000000000000000', 'hex') },
      /exponent is larger than 2\^63/,
    ],
    [
      'an exponent of 2^63 behind a leading zero byte',
      { kty: 'RSA', n: Buffer.alloc(256, 0xc5), e: Buffer.from('008000000000000000', 'hex') },
      /exponent is larger than 2\^63/,
    ],
    [
      'an exponent of 2^64 + 1',
      { kty: 'RSA', n: Buffer.alloc(256, 0xc5), e: Buffer.from('010000000000000001', 'hex') },
      /exponent is larger than 2\^63/,
    ],
    ['an EC key without y', { kty: 'EC', crv: 'P-384', x: Buffer.alloc(48, 1) }, /the key's point is not on P-384/],
    [
      'a coordinate too long for the curve, its extra byte not zero',
      { kty: 'EC', crv: 'P-521', x: Buffer.alloc(67, 1), y: Buffer.alloc(66, 1) },
      /the key's point is not on P-521/,
    ],
  ];
  for (const [name, jwk, message] of refused) {
    it(`refuses ${name} (FAILED_PRECONDITION UnsupportedKeyType)`, () => {
      const e = thrown(() => jwkToPublicKeyPem(jwk, 'key "k" (version "v")'));
      expect([e.kind, e.reason]).to.deep.equal(['failed-precondition', 'UnsupportedKeyType']);
      expect(e.message)
        .to.match(message)
        .and.match(/^azure provider: key "k" \(version "v"\): /);
    });
  }
});

describe('azure cert objects: CER → CERTIFICATE PEM', () => {
  it('the same bytes as openssl x509 writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'azure-cert-'));
    try {
      writeFileSync(
        join(dir, 'k.pem'),
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
      );
      const pem = execFileSync('openssl', [
        'req',
        '-x509',
        '-key',
        join(dir, 'k.pem'),
        '-subj',
        '/CN=cert-object',
        '-days',
        '1',
      ]).toString();
      const der = execFileSync('openssl', ['x509', '-outform', 'DER'], { input: pem });
      expect(renderCertificate(der)[0]?.bytes.toString()).to.equal(pem);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
