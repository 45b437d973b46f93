import { expect } from 'chai';
import { PathSetChecker, pathProblem, quotePath } from '../../../../driver/volume/path-rules.js';

/** Checks a whole set of paths as validateMountResponse does, one at a time. */
function assertValidPaths(paths: readonly string[]): void {
  const checker = new PathSetChecker();
  for (const path of paths) checker.add(path);
}
import { SscError } from '../../../../lib/errors.js';

const long = (n: number, c = 'a') => c.repeat(n);

describe('pathProblem', () => {
  const valid: string[] = [
    'a',
    'username',
    'dir/file',
    'a/b/c/d',
    '.hidden',
    'a/.b',
    'a/..b',
    'a/b..',
    'metadata',
    'x/.metadata',
    '.metadatax',
    'with space',
    'é',
    long(255),
    `${long(255)}/${long(255)}`,
    Array(128).fill('a').join('/'),
  ];
  for (const path of valid) {
    it(`accepts ${quotePath(path)}`, () => expect(pathProblem(path)).to.equal(undefined));
  }
  it('accepts exactly 4096 bytes', () => {
    const path = Array(16).fill(long(254)).join('/') + '/' + long(4096 - 16 * 255);
    expect(Buffer.byteLength(path)).to.equal(4096);
    expect(pathProblem(path)).to.equal(undefined);
  });

  const invalid: [string, string, string][] = [
    ['empty', '', 'path is empty'],
    ['NUL', 'a\0b', 'path contains a NUL byte'],
    ['absolute', '/etc/passwd', 'path is absolute'],
    ['absolute root', '/', 'path is absolute'],
    ['..', '..', 'path starts with ".."'],
    ['../x', '../x', 'path starts with ".."'],
    ['..data', '..data', 'path starts with ".."'],
    ['..foo', '..foo', 'path starts with ".."'],
    ['..data/x', '..data/x', 'path starts with ".."'],
    ['a/../b', 'a/../b', 'path has a ".." element'],
    ['a/..', 'a/..', 'path has a ".." element'],
    ['a//b', 'a//b', 'path is not clean (empty or "." element)'],
    ['a/', 'a/', 'path is not clean (empty or "." element)'],
    ['./a', './a', 'path is not clean (empty or "." element)'],
    ['a/.', 'a/.', 'path is not clean (empty or "." element)'],
    ['.', '.', 'path is not clean (empty or "." element)'],
    ['.metadata', '.metadata', 'path is inside the reserved .metadata directory'],
    ['.metadata/x', '.metadata/x', 'path is inside the reserved .metadata directory'],
    ['.metadata/versions.json', '.metadata/versions.json', 'path is inside the reserved .metadata directory'],
    ['element of 256 bytes', `a/${long(256)}`, 'a path element is longer than 255 bytes'],
    ['element of 256 bytes in 128 chars', long(128, 'é'), 'a path element is longer than 255 bytes'],
    ['4097 bytes', 'a/'.repeat(2048) + 'a', 'path is longer than 4096 bytes'],
    ['4098 bytes in 2049 chars', long(2049, 'é'), 'path is longer than 4096 bytes'],
    ['129 levels', Array(129).fill('a').join('/'), 'path is nested deeper than 128 levels'],
    ['2,000 levels within 4096 bytes', Array(2000).fill('a').join('/'), 'path is nested deeper than 128 levels'],
  ];
  for (const [name, path, problem] of invalid) {
    it(`rejects ${name}: ${problem}`, () => expect(pathProblem(path)).to.equal(problem));
  }
});

describe('PathSetChecker', () => {
  function failure(paths: string[]): SscError {
    try {
      assertValidPaths(paths);
    } catch (err) {
      expect(err).to.be.instanceOf(SscError);
      return err as SscError;
    }
    throw new Error(`expected ${JSON.stringify(paths)} to be rejected`);
  }

  const ok: string[][] = [[], ['a'], ['a', 'b', 'c/d', 'c/e', 'f/g/h'], ['ab', 'a/b'], ['a/b', 'a/bc', 'a/b2/c']];
  for (const paths of ok)
    it(`accepts ${JSON.stringify(paths)}`, () => expect(() => assertValidPaths(paths)).to.not.throw());

  const bad: [string[], string][] = [
    [['a', '/abs'], 'provider returned an invalid file path "/abs": path is absolute'],
    [['a', '..data'], 'provider returned an invalid file path "..data": path starts with ".."'],
    [
      ['.metadata/v'],
      'provider returned an invalid file path ".metadata/v": path is inside the reserved .metadata directory',
    ],
    [['a', 'b', 'a'], 'provider returned the file path "a" more than once'],
    [['a', 'a/b'], 'provider returned "a" both as a file and as a directory'],
    [['a/b/c', 'a/b'], 'provider returned "a/b" both as a file and as a directory'],
    [['x/y/z', 'x'], 'provider returned "x" both as a file and as a directory'],
  ];
  for (const [paths, message] of bad) {
    it(`rejects ${JSON.stringify(paths)}`, () => {
      const err = failure(paths);
      expect([err.kind, err.reason, err.message]).to.deep.equal([
        'invalid-argument',
        'InvalidProviderResponse',
        message,
      ]);
    });
  }

  it('shortens very long paths in its message', () => {
    const err = failure([`/${long(5000)}`]);
    expect(err.message).to.equal(
      `provider returned an invalid file path "/${long(63)}…": path is longer than 4096 bytes`,
    );
  });
});
