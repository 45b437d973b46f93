import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { encodeInteger, encodeSequence, encodeTlv, readOne } from '../../../../lib/asn1/der.js';
import { decodeAllPem, decodePem, encodePem } from '../../../../lib/asn1/pem.js';
import { rc2CbcDecrypt } from '../../../../lib/asn1/rc2.js';
import { tlsCertificateData, tlsPrivateKeyData } from '../../../../driver/secret-sync/tls-secret-data.js';
import { TlsInputError } from '../../../../lib/asn1/tls-input-error.js';

// The conversion pieces against fixed vectors and Node's (OpenSSL's) own encodings.
// test/integration/tls-parity.test.ts compares whole objects with upstream's Go code.

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('PEM as Go reads and writes it', () => {
  const decoded: [
    string,
    string,
    { type: string; headers?: Record<string, string>; bytes: string } | undefined,
    string,
  ][] = [
    [
      'a plain block',
      `-----BEGIN X-----\n${b64('hello')}\n-----END X-----\nafter`,
      { type: 'X', bytes: 'hello' },
      'after',
    ],
    [
      'text before the block',
      `garbage\n-----BEGIN X-----\n${b64('a')}\n-----END X-----\n`,
      { type: 'X', bytes: 'a' },
      '',
    ],
    [
      'CRLF lines and trailing blanks',
      `-----BEGIN X-----  \r\n${b64('crlf')}\r\n-----END X-----\t\r\n`,
      { type: 'X', bytes: 'crlf' },
      '',
    ],
    [
      'spaces and tabs inside base64',
      `-----BEGIN X-----\n${b64('spaced').slice(0, 4)} \t${b64('spaced').slice(4)}\n-----END X-----\n`,
      { type: 'X', bytes: 'spaced' },
      '',
    ],
    [
      'headers',
      `-----BEGIN X-----\nProc-Type: 4,ENCRYPTED\n b : c \n\n${b64('h')}\n-----END X-----\n`,
      { type: 'X', headers: { 'Proc-Type': '4,ENCRYPTED', b: 'c' }, bytes: 'h' },
      '',
    ],
    ['an empty block', '-----BEGIN X-----\n-----END X-----\n', { type: 'X', bytes: '' }, ''],
    ['a BEGIN not at the start of a line', `x-----BEGIN X-----\n${b64('a')}\n-----END X-----\n`, undefined, ''],
    ['a mismatched END label', `-----BEGIN X-----\n${b64('a')}\n-----END Y-----\n`, undefined, ''],
    ['text after the END label', `-----BEGIN X-----\n${b64('a')}\n-----END X-----junk\n`, undefined, ''],
    ['invalid base64 (unpadded)', '-----BEGIN X-----\nYWJjZA\n-----END X-----\n', undefined, ''],
    ['no END line', `-----BEGIN X-----\n${b64('a')}\n`, undefined, ''],
    [
      'the last BEGIN before an END',
      `-----BEGIN X-----\n-----BEGIN Y-----\n${b64('y')}\n-----END Y-----\n`,
      { type: 'Y', bytes: 'y' },
      '',
    ],
  ];
  for (const [name, input, block, rest] of decoded) {
    it(`decodes ${name}`, () => {
      const r = decodePem(Buffer.from(input));
      if (!block) {
        expect(r.block).to.equal(undefined);
        expect(r.rest.toString()).to.equal(input);
        return;
      }
      expect(r.block?.type).to.equal(block.type);
      expect(Object.fromEntries(r.block?.headers ?? [])).to.deep.equal(block.headers ?? {});
      expect(r.block?.bytes.toString()).to.equal(block.bytes);
      expect(r.rest.toString()).to.equal(rest);
    });
  }

  it('skips a block with bad base64 and finds the next one', () => {
    const { blocks } = decodeAllPem(
      Buffer.from(`-----BEGIN A-----\n!!!!\n-----END A-----\n-----BEGIN B-----\n${b64('b')}\n-----END B-----\n`),
    );
    expect(blocks.map((b) => b.type)).to.deep.equal(['B']);
  });

  it('encodes base64 in lines of 64, Proc-Type first and other headers sorted, a blank line after them', () => {
    const bytes = Buffer.alloc(100, 7);
    const out = encodePem({
      type: 'T',
      headers: new Map([
        ['Zeta', 'z'],
        ['Proc-Type', '4,X'],
        ['Alpha', 'a'],
      ]),
      bytes,
    })?.toString();
    const body = bytes.toString('base64');
    expect(out).to.equal(
      `-----BEGIN T-----\nProc-Type: 4,X\nAlpha: a\nZeta: z\n\n${body.slice(0, 64)}\n${body.slice(64, 128)}\n${body.slice(128)}\n-----END T-----\n`,
    );
    expect(encodePem({ type: 'T', headers: new Map(), bytes: Buffer.alloc(0) })?.toString()).to.equal(
      '-----BEGIN T-----\n-----END T-----\n',
    );
    expect(encodePem({ type: 'T', headers: new Map([['a:b', 'c']]), bytes })).to.equal(undefined);
  });
});

describe('RC2 (RFC 2268 section 5 vectors)', () => {
  const vectors: [string, number, string, string][] = [
    ['0000000000000000', 63, '0000000000000000', 'ebb773f993278eff'],
    ['ffffffffffffffff', 64, 'ffffffffffffffff', '278b27e42e2f0d49'],
    ['3000000000000000', 64, '1000000000000001', '30649edf9be7d2c2'],
    ['88', 64, '0000000000000000', '61a8a244adacccf0'],
    ['88bca90e90875a', 64, '0000000000000000', '6ccf4308974c267f'],
    ['88bca90e90875a7f0f79c384627bafb2', 64, '0000000000000000', '1a807d272bbe5db1'],
    ['88bca90e90875a7f0f79c384627bafb2', 128, '0000000000000000', '2269552ab0f85ca6'],
    ['88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e', 129, '0000000000000000', '5b78d3a43dfff1f1'],
  ];
  for (const [key, bits, plain, cipher] of vectors) {
    it(`decrypts with key ${key.slice(0, 8)}… and ${bits} effective bits`, () => {
      // CBC with a zero IV is ECB for one block.
      expect(
        rc2CbcDecrypt(Buffer.from(key, 'hex'), bits, Buffer.alloc(8), Buffer.from(cipher, 'hex')).toString('hex'),
      ).to.equal(plain);
    });
  }
});

describe('DER strictness (as Go encoding/asn1)', () => {
  const refused: [string, string][] = [
    ['an indefinite length', '3080020100' + '0000'],
    ['a non-minimal length', '30810302010000'.slice(0, 12)],
    ['superfluous zeros in a length', '3082000302010000'.slice(0, 14)],
    ['a truncated value', '3005020100'],
  ];
  for (const [name, hex] of refused) {
    it(`refuses ${name}`, () => {
      expect(() => readOne(Buffer.from(hex, 'hex'), 'test')).to.throw(TlsInputError);
    });
  }

  it('refuses a non-minimal INTEGER in a key', () => {
    const key = encodeSequence([encodeInteger(0n), encodeTlv(0x02, Buffer.from([0, 1]))]);
    expect(() =>
      tlsPrivateKeyData(
        Buffer.from(`-----BEGIN RSA PRIVATE KEY-----\n${key.toString('base64')}\n-----END RSA PRIVATE KEY-----\n`),
      ),
    ).to.throw(TlsInputError, /not a private key/);
  });
});

function pem(type: string, der: Buffer): Buffer {
  return encodePem({ type, headers: new Map(), bytes: der }) as Buffer;
}

function keyPem(key: KeyObject, type: 'pkcs8' | 'pkcs1' | 'sec1'): Buffer {
  return Buffer.from(key.export({ type, format: 'pem' }) as string);
}

describe('tls.key encodings (against OpenSSL through Node)', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
  for (const from of ['pkcs8', 'pkcs1'] as const) {
    it(`writes an RSA key given as ${from.toUpperCase()} as OpenSSL's PKCS#1 "RSA PRIVATE KEY"`, () => {
      expect(tlsPrivateKeyData(keyPem(rsa, from)).toString()).to.equal(keyPem(rsa, 'pkcs1').toString());
    });
  }
  it('reads the bytes whatever the PEM label says (a PKCS#1 key labelled PRIVATE KEY)', () => {
    const der = rsa.export({ type: 'pkcs1', format: 'der' });
    expect(tlsPrivateKeyData(pem('PRIVATE KEY', der)).toString()).to.equal(keyPem(rsa, 'pkcs1').toString());
  });
  for (const curve of ['P-224', 'P-256', 'P-384', 'P-521']) {
    const ec = generateKeyPairSync('ec', { namedCurve: curve }).privateKey;
    for (const from of ['pkcs8', 'sec1'] as const) {
      it(`writes a ${curve} key given as ${from.toUpperCase()} as OpenSSL's SEC1 "EC PRIVATE KEY"`, () => {
        expect(tlsPrivateKeyData(keyPem(ec, from)).toString()).to.equal(keyPem(ec, 'sec1').toString());
      });
    }
  }
  it('writes the uncompressed public point and the curve even when the input had neither', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const d = Buffer.from(ec.export({ format: 'jwk' }).d as string, 'base64url');
    // SEC1 with only version and scalar (no [0] curve, no [1] point), wrapped in PKCS#8 naming P-256.
    const bare = encodeSequence([encodeInteger(1n), encodeTlv(0x04, d)]);
    const algorithm = encodeSequence([
      encodeTlv(0x06, Buffer.from('2a8648ce3d0201', 'hex')),
      encodeTlv(0x06, Buffer.from('2a8648ce3d030107', 'hex')),
    ]);
    const pkcs8 = encodeSequence([encodeInteger(0n), algorithm, encodeTlv(0x04, bare)]);
    expect(tlsPrivateKeyData(pem('PRIVATE KEY', pkcs8)).toString()).to.equal(keyPem(ec, 'sec1').toString());
  });
  it('refuses an RSA key whose numbers do not agree (p * q != n), as Go does', () => {
    const jwk = rsa.export({ format: 'jwk' });
    const n = BigInt(`0x${Buffer.from(jwk.n as string, 'base64url').toString('hex')}`) + 2n;
    const broken = createPrivateKey({
      key: { ...jwk, n: Buffer.from(n.toString(16), 'hex').toString('base64url') },
      format: 'jwk',
    });
    expect(() => tlsPrivateKeyData(keyPem(broken, 'pkcs1'))).to.throw(TlsInputError, /p \* q != n/);
  });
  it('refuses a curve upstream does not know, naming it', () => {
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
    expect(() => tlsPrivateKeyData(keyPem(k1, 'pkcs8'))).to.throw(
      TlsInputError,
      /unknown elliptic curve 1\.3\.132\.0\.10/,
    );
  });
});

describe('tls.crt', () => {
  it('re-encodes every CERTIFICATE block in order, dropping other blocks and text', () => {
    const one = b64('first certificate bytes, long enough to wrap past sixty-four columns of base64');
    const input =
      `subject=/CN=x\n-----BEGIN CERTIFICATE-----\n${one.slice(0, 76)}\n${one.slice(76)}\n-----END CERTIFICATE-----\n` +
      `-----BEGIN PRIVATE KEY-----\n${b64('k')}\n-----END PRIVATE KEY-----\n-----BEGIN CERTIFICATE-----\n${b64('second')}\n-----END CERTIFICATE-----`;
    expect(tlsCertificateData(Buffer.from(input)).toString()).to.equal(
      `-----BEGIN CERTIFICATE-----\n${one.slice(0, 64)}\n${one.slice(64)}\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n${b64('second')}\n-----END CERTIFICATE-----\n`,
    );
  });
});
