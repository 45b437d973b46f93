import { expect } from 'chai';
import { buildSecretData, secretDataDigest, TLS_SECRET_TYPE } from '../../driver/sync/secret-data.js';
import type { SecretObject } from '../../driver/spc/secret-provider-class.js';
import { SscError } from '../../proto/runtime/errors.js';

const CERT = (n: string) => `-----BEGIN CERTIFICATE-----\nMII${n}\n-----END CERTIFICATE-----`;
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIkey\n-----END PRIVATE KEY-----';
const RSA_KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIrsa\n-----END RSA PRIVATE KEY-----';

function object(type: string, data: [string, string][]): SecretObject {
  return { secretName: 's', type, labels: {}, annotations: {}, data: data.map(([objectName, key]) => ({ objectName, key })) };
}

function files(entries: Record<string, string>): Map<string, Buffer> {
  return new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]));
}

function text(data: Map<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...data].map(([k, v]) => [k, v.toString()]));
}

describe('buildSecretData', () => {
  it('copies mounted files to data keys for an Opaque Secret', () => {
    const data = buildSecretData(object('Opaque', [['db/password', 'password'], ['user', 'username']]), files({ 'db/password': 'p', user: 'u' }));
    expect(text(data)).to.deep.equal({ password: 'p', username: 'u' });
  });

  it('splits PEM into tls.crt (all certificates, in order) and tls.key for kubernetes.io/tls', () => {
    const pem = `${KEY}\n${CERT('leaf')}\n${CERT('intermediate')}\n`;
    const data = buildSecretData(object(TLS_SECRET_TYPE, [['cert', 'tls.crt'], ['cert', 'tls.key']]), files({ cert: pem }));
    expect(text(data)).to.deep.equal({ 'tls.crt': `${CERT('leaf')}\n${CERT('intermediate')}\n`, 'tls.key': `${KEY}\n` });
  });

  it('accepts an RSA PRIVATE KEY block for tls.key and copies other keys raw', () => {
    const data = buildSecretData(object(TLS_SECRET_TYPE, [['c', 'tls.crt'], ['c', 'tls.key'], ['ca', 'ca.crt']]), files({ c: `${CERT('x')}\n${RSA_KEY}`, ca: 'raw-ca' }));
    expect(text(data)['tls.key']).to.equal(`${RSA_KEY}\n`);
    expect(text(data)['ca.crt']).to.equal('raw-ca');
  });

  it('drops the key of an object that is no longer mounted when asked to (on-object-removed: remove)', () => {
    const data = buildSecretData(object('Opaque', [['a', 'ka'], ['gone', 'kg']]), files({ a: '1' }), { dropMissing: true });
    expect(text(data)).to.deep.equal({ ka: '1' });
  });

  const refusals: [string, SecretObject, Map<string, Buffer>, RegExp][] = [
    ['an objectName that is not a mounted file', object('Opaque', [['missing', 'k']]), files({ a: '1' }), /objectName "missing" is not a file in the mounted volume/],
    ['a key listed twice', object('Opaque', [['a', 'k'], ['b', 'k']]), files({ a: '1', b: '2' }), /key "k" is listed twice/],
    ['a tls object without a private key', object(TLS_SECRET_TYPE, [['c', 'tls.crt'], ['c', 'tls.key']]), files({ c: CERT('x') }), /exactly one PEM private key for tls.key, found 0/],
    ['a tls object without a certificate', object(TLS_SECRET_TYPE, [['c', 'tls.crt'], ['c', 'tls.key']]), files({ c: KEY }), /no PEM certificate for tls.crt/],
    ['a tls Secret missing tls.key', object(TLS_SECRET_TYPE, [['c', 'tls.crt']]), files({ c: `${CERT('x')}\n${KEY}` }), /needs data entries for both tls.crt and tls.key/],
  ];
  for (const [name, obj, mounted, message] of refusals) {
    it(`refuses ${name}, naming the Secret and never the contents`, () => {
      let err: unknown;
      try { buildSecretData(obj, mounted); } catch (e) { err = e; }
      expect(err).to.be.instanceOf(SscError);
      expect((err as SscError).message).to.match(message).and.match(/^secretObjects s: /);
      expect((err as SscError).message).not.to.include('MII');
      expect((err as SscError).reason).to.equal('InvalidSecretObject');
    });
  }
});

describe('secretDataDigest', () => {
  it('is stable across key order and changes with any value', () => {
    const a = new Map([['x', Buffer.from('1')], ['y', Buffer.from('2')]]);
    const b = new Map([['y', Buffer.from('2')], ['x', Buffer.from('1')]]);
    expect(secretDataDigest(a)).to.equal(secretDataDigest(b)).and.match(/^[0-9a-f]{64}$/);
    expect(secretDataDigest(new Map([['x', Buffer.from('1')], ['y', Buffer.from('3')]]))).not.to.equal(secretDataDigest(a));
  });

  it('cannot be fooled by moving bytes between key and value', () => {
    expect(secretDataDigest(new Map([['ab', Buffer.from('c')]]))).not.to.equal(secretDataDigest(new Map([['a', Buffer.from('bc')]])));
  });
});
