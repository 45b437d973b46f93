import { expect } from 'chai';
import { canonicalTargetPath, cleanTargetPath } from '../../../../driver/mount/target-path.js';
import { SscError } from '../../../../lib/errors.js';

describe('cleanTargetPath', () => {
  const cases: [string, string][] = [
    ['/a/b', '/a/b'],
    ['/a/b/', '/a/b'],
    ['/a//b', '/a/b'],
    ['/a/./b', '/a/b'],
    ['//a/b//', '/a/b'],
    ['/./a/.', '/a'],
    ['/', '/'],
    ['//', '/'],
    ['a/./b/', 'a/b'],
    ['/a/../b', '/a/../b'],
    ['/a/.b/..c', '/a/.b/..c'],
  ];
  for (const [path, clean] of cases) {
    it(`${JSON.stringify(path)} → ${JSON.stringify(clean)}`, () => expect(cleanTargetPath(path)).to.equal(clean));
  }
});

describe('canonicalTargetPath', () => {
  it("leaves kubelet's paths unchanged", () => {
    const path = '/var/lib/kubelet/pods/0b7c-11/volumes/kubernetes.io~csi/secrets-store-inline/mount';
    expect(canonicalTargetPath(path)).to.equal(path);
  });

  const refused: [string, string][] = [
    ['rel/path', 'Target path "rel/path" must be an absolute path without ".." elements'],
    ['./a', 'Target path "./a" must be an absolute path without ".." elements'],
    ['/a/../b', 'Target path "/a/../b" must be an absolute path without ".." elements'],
    ['/a/..', 'Target path "/a/.." must be an absolute path without ".." elements'],
    ['/', 'Target path "/" is the root directory: name a directory for the volume'],
    ['/./', 'Target path "/./" is the root directory: name a directory for the volume'],
    ['/a\0', 'Target path "/a\\u0000" must not contain a NUL byte'],
  ];
  for (const [path, message] of refused) {
    it(`refuses ${JSON.stringify(path)} with INVALID_ARGUMENT`, () => {
      let caught: unknown;
      try {
        canonicalTargetPath(path);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(SscError);
      expect((caught as SscError).kind).to.equal('invalid-argument');
      expect((caught as SscError).reason).to.equal('InvalidRequest');
      expect((caught as SscError).message).to.equal(message);
    });
  }
});
