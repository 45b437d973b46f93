import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { buildSecretData, secretDataDigest, TLS_SECRET_TYPE } from '../../../../driver/secret-sync/secret-data.js';
import type { SecretObject } from '../../../../driver/spc/secret-provider-class.js';
import { SscError } from '../../../../lib/errors.js';

// Certificate bytes are not parsed (as upstream): any base64 body will do.
const CERT = (n: string) =>
  `-----BEGIN CERTIFICATE-----\n${Buffer.from(`certificate ${n}`).toString('base64')}\n-----END CERTIFICATE-----`;
const RSA = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
const KEY = RSA.export({ type: 'pkcs8', format: 'pem' }).toString().trim();
const RSA_KEY = RSA.export({ type: 'pkcs1', format: 'pem' }).toString().trim();

function object(type: string, data: [string, string][]): SecretObject {
  return {
    secretName: 's',
    type,
    labels: {},
    annotations: {},
    data: data.map(([objectName, key]) => ({ objectName, key })),
  };
}

function files(entries: Record<string, string>): Map<string, Buffer> {
  return new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]));
}

function text(data: Map<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...data].map(([k, v]) => [k, v.toString()]));
}

describe('buildSecretData', () => {
  it('copies mounted files to data keys for an Opaque Secret', () => {
    const data = buildSecretData(
      object('Opaque', [
        ['db/password', 'password'],
        ['user', 'username'],
      ]),
      files({ 'db/password': 'p', user: 'u' }),
    );
    expect(text(data)).to.deep.equal({ password: 'p', username: 'u' });
  });

  it('splits PEM into tls.crt (all certificates, in order) and tls.key (PKCS#8 rewritten as PKCS#1, as upstream) for kubernetes.io/tls', () => {
    const pem = `${KEY}\n${CERT('leaf')}\n${CERT('intermediate')}\n`;
    const data = buildSecretData(
      object(TLS_SECRET_TYPE, [
        ['cert', 'tls.crt'],
        ['cert', 'tls.key'],
      ]),
      files({ cert: pem }),
    );
    expect(text(data)).to.deep.equal({
      'tls.crt': `${CERT('leaf')}\n${CERT('intermediate')}\n`,
      'tls.key': `${RSA_KEY}\n`,
    });
  });

  it('accepts an RSA PRIVATE KEY block for tls.key and copies other keys raw', () => {
    const data = buildSecretData(
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
        ['ca', 'ca.crt'],
      ]),
      files({ c: `${CERT('x')}\n${RSA_KEY}`, ca: 'raw-ca' }),
    );
    expect(text(data)['tls.key']).to.equal(`${RSA_KEY}\n`);
    expect(text(data)['ca.crt']).to.equal('raw-ca');
  });

  it('uses the last key block when there are several, as upstream', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const data = buildSecretData(
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({ c: `${RSA_KEY}\n${CERT('x')}\n${ec.export({ type: 'pkcs8', format: 'pem' }).toString()}` }),
    );
    expect(text(data)['tls.key']).to.equal(ec.export({ type: 'sec1', format: 'pem' }).toString());
  });

  it('drops the key of an object that is no longer mounted when asked to (on-object-removed: remove)', () => {
    const data = buildSecretData(
      object('Opaque', [
        ['a', 'ka'],
        ['gone', 'kg'],
      ]),
      files({ a: '1' }),
      { dropMissing: true },
    );
    expect(text(data)).to.deep.equal({ ka: '1' });
  });

  const refusals: [string, SecretObject, Map<string, Buffer>, RegExp][] = [
    [
      'an objectName that is not a mounted file',
      object('Opaque', [['missing', 'k']]),
      files({ a: '1' }),
      /objectName "missing" is not a file in the mounted volume/,
    ],
    [
      'a key listed twice',
      object('Opaque', [
        ['a', 'k'],
        ['b', 'k'],
      ]),
      files({ a: '1', b: '2' }),
      /key "k" is listed twice/,
    ],
    [
      'a tls object without a private key',
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({ c: CERT('x') }),
      /object "c" for tls.key: no PEM private key block for tls.key/,
    ],
    [
      'a tls object without a certificate',
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({ c: KEY }),
      /object "c" for tls.crt: no PEM CERTIFICATE block for tls.crt/,
    ],
    [
      'a tls object that is neither PEM nor PKCS#12',
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({ c: 'MIIgarbage' }),
      /object "c" for tls.crt: neither PEM nor a PKCS#12 file upstream can read/,
    ],
    [
      'an encrypted key',
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({
        c: `${CERT('x')}\n${RSA.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'pw' }).toString()}`,
      }),
      /"ENCRYPTED PRIVATE KEY"\) is encrypted/,
    ],
    [
      'an Ed25519 key',
      object(TLS_SECRET_TYPE, [
        ['c', 'tls.crt'],
        ['c', 'tls.key'],
      ]),
      files({
        c: `${CERT('x')}\n${generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()}`,
      }),
      /Ed25519 private keys are not supported/,
    ],
    [
      'a tls Secret missing tls.key',
      object(TLS_SECRET_TYPE, [['c', 'tls.crt']]),
      files({ c: `${CERT('x')}\n${KEY}` }),
      /needs data entries for both tls.crt and tls.key/,
    ],
  ];
  for (const [name, obj, mounted, message] of refusals) {
    it(`refuses ${name}, naming the Secret and never the contents`, () => {
      let err: unknown;
      try {
        buildSecretData(obj, mounted);
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(SscError);
      expect((err as SscError).message)
        .to.match(message)
        .and.match(/^secretObjects s: /);
      expect((err as SscError).message).not.to.include('MII');
      expect((err as SscError).message).not.to.include(KEY.split('\n')[1]);
      expect((err as SscError).reason).to.equal('InvalidSecretObject');
    });
  }
});

describe('secretDataDigest', () => {
  it('is stable across key order and changes with any value', () => {
    const a = new Map([
      ['x', Buffer.from('1')],
      ['y', Buffer.from('2')],
    ]);
    const b = new Map([
      ['y', Buffer.from('2')],
      ['x', Buffer.from('1')],
    ]);
    expect(secretDataDigest(a))
      .to.equal(secretDataDigest(b))
      .and.match(/^[0-9a-f]{64}$/);
    expect(
      secretDataDigest(
        new Map([
          ['x', Buffer.from('1')],
          ['y', Buffer.from('3')],
        ]),
      ),
    ).not.to.equal(secretDataDigest(a));
  });

  it('cannot be fooled by moving bytes between key and value', () => {
    expect(secretDataDigest(new Map([['ab', Buffer.from('c')]]))).not.to.equal(
      secretDataDigest(new Map([['a', Buffer.from('bc')]])),
    );
  });
});
