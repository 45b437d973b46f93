import { expect } from 'chai';
import { assertProviderName, candidateSocketPaths } from '../../../../driver/provider-client/socket-path.js';
import { SscError } from '../../../../lib/errors.js';

describe('assertProviderName', () => {
  for (const name of ['vault', 'azure', 'gcp', 'aws_x-1', 'A', 'a'.repeat(30)]) {
    it(`accepts ${JSON.stringify(name)}`, () => expect(() => assertProviderName(name)).to.not.throw());
  }
  const bad: [string, string][] = [
    ['', '""'],
    ['a'.repeat(31), JSON.stringify('a'.repeat(31))],
    ['../vault', '"../vault"'],
    ['..', '".."'],
    ['a/b', '"a/b"'],
    ['vault.sock', '"vault.sock"'],
    ['va ult', '"va ult"'],
    ['vault\n', '"vault\\n"'],
    ['é', '"é"'],
    ['b'.repeat(100), JSON.stringify('b'.repeat(64))],
  ];
  for (const [name, shown] of bad) {
    it(`rejects ${JSON.stringify(name).slice(0, 40)}`, () => {
      let caught: unknown;
      try {
        assertProviderName(name);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(SscError);
      const e = caught as SscError;
      expect([e.kind, e.reason, e.message]).to.deep.equal([
        'invalid-argument',
        'InvalidProviderName',
        `provider name ${shown} is invalid: it must match ^[a-zA-Z0-9_-]{1,30}$`,
      ]);
    });
  }
});

describe('candidateSocketPaths', () => {
  it('tries <dir>/<provider>.sock in the given order', () => {
    expect(
      candidateSocketPaths('vault', [
        '/etc/kubernetes/secrets-store-csi-providers',
        '/var/run/secrets-store-csi-providers/',
      ]),
    ).to.deep.equal([
      '/etc/kubernetes/secrets-store-csi-providers/vault.sock',
      '/var/run/secrets-store-csi-providers/vault.sock',
    ]);
  });
  it('returns nothing without dirs', () => expect(candidateSocketPaths('vault', [])).to.deep.equal([]));
  it('validates the name first', () => expect(() => candidateSocketPaths('../x', ['/d'])).to.throw(SscError));
});
