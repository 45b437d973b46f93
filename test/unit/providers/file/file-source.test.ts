import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SourceContentCache } from '../../../../providers/file/content-cache.js';
import { SourceReader } from '../../../../providers/file/source-file.js';
import { SscError } from '../../../../lib/errors.js';

/**
 * SourceReader reads plain paths without realpath and leaves every path with a symlink
 * or `..` on the way to realpath: both must give the same answers, and nothing outside
 * the root, whichever way it is spelled.
 */
describe('file provider source files (SourceReader)', () => {
  let work: string;
  let root: string;

  before(async () => {
    work = await realpath(await mkdtemp(join(tmpdir(), 'ssc-file-source-')));
    root = join(work, 'root');
    await mkdir(join(root, 'db', 'deep'), { recursive: true });
    await mkdir(join(work, 'outside-dir'));
    await writeFile(join(root, 'top'), 'top secret');
    await writeFile(join(root, 'db', 'password'), 's3cret');
    await writeFile(join(root, 'db', 'deep', 'key'), 'deep key');
    await writeFile(join(root, 'empty'), '');
    await writeFile(join(work, 'outside'), 'not yours');
    await writeFile(join(work, 'outside-dir', 'file'), 'not yours either');
    await symlink('db/password', join(root, 'link-in'));
    await symlink(join(root, 'db'), join(root, 'dir-link-in'));
    await symlink(join(work, 'outside'), join(root, 'link-out'));
    await symlink(join(work, 'outside-dir'), join(root, 'dir-link-out'));
    await symlink('missing', join(root, 'dangling'));
    await symlink(root, join(work, 'root-link'));
    execFileSync('mkfifo', [join(root, 'fifo')]);
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  // A reader per read, uncached: what one object of a Mount gets.
  const read = (sourcePath: string) =>
    new SourceReader(root, () => '').read({ objectName: 'x', sourcePath }).contents.toString();
  const failure = (sourcePath: string): SscError => {
    try {
      read(sourcePath);
    } catch (err) {
      return err as SscError;
    }
    throw new Error(`expected ${sourcePath} to fail`);
  };

  const served: [string, string, string][] = [
    ['a file at the top', 'top', 'top secret'],
    ['a nested file', 'db/password', 's3cret'],
    ['a deeper file, spelled with ./ and //', './db//deep/key', 'deep key'],
    ['an empty file', 'empty', ''],
    ['a symlink to a file inside the root', 'link-in', 's3cret'],
    ['a file below a symlinked directory inside the root', 'dir-link-in/deep/key', 'deep key'],
    ['a path with .. that stays inside the root', 'db/deep/../password', 's3cret'],
  ];
  for (const [name, sourcePath, contents] of served) {
    it(`serves ${name} (${sourcePath})`, () => expect(read(sourcePath)).to.equal(contents));
  }

  const refused: [string, string, string, string, RegExp][] = [
    [
      'a symlink leading outside',
      'link-out',
      'permission-denied',
      'OutsideRoot',
      /"x" \(sourcePath "link-out"\) is outside the provider root/,
    ],
    [
      'a file below a symlinked directory leading outside',
      'dir-link-out/file',
      'permission-denied',
      'OutsideRoot',
      /is outside the provider root/,
    ],
    ['.. out of the root', '../outside', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    [
      '.. out of a symlinked directory',
      'dir-link-in/../../outside',
      'permission-denied',
      'OutsideRoot',
      /is outside the provider root/,
    ],
    ['the root itself', '.', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    ['a missing file', 'nope', 'not-found', 'ObjectNotFound', /"x" \(sourcePath "nope"\) not found/],
    ['a file below a missing directory', 'nodir/password', 'not-found', 'ObjectNotFound', /not found/],
    ['a file below a file', 'top/password', 'not-found', 'ObjectNotFound', /not found/],
    ['a dangling symlink', 'dangling', 'not-found', 'ObjectNotFound', /not found/],
    ['a directory', 'db', 'invalid-argument', 'ReadFailed', /"x" \(sourcePath "db"\) cannot be read \(EISDIR\)/],
    ['a directory spelled with a trailing /', 'db/', 'invalid-argument', 'ReadFailed', /cannot be read \(EISDIR\)/],
    ['a FIFO (without hanging)', 'fifo', 'invalid-argument', 'ReadFailed', /is not a regular file/],
    [
      'an absolute path',
      '/etc/hostname',
      'invalid-argument',
      'InvalidParameters',
      /sourcePath must be relative to the provider root/,
    ],
  ];
  for (const [name, sourcePath, kind, reason, message] of refused) {
    it(`refuses ${name} (${sourcePath})`, () => {
      const err = failure(sourcePath);
      expect(err).to.be.instanceOf(SscError);
      expect([err.kind, err.reason]).to.deep.equal([kind, reason]);
      expect(err.message).to.match(message);
      expect(err.message).not.to.include('not yours');
    });
  }

  describe('one reader for a whole Mount (SourceReader)', () => {
    const version = (contents: Buffer): string => `v-${contents.length}`;

    it('reads several objects of one folder and a symlinked one alike', () => {
      const reader = new SourceReader(root, version);
      const got = ['db/password', 'db/deep/key', 'dir-link-in/deep/key', 'db/password', 'top'].map((sourcePath) =>
        reader.read({ objectName: 'x', sourcePath }).contents.toString(),
      );
      expect(got).to.deep.equal(['s3cret', 'deep key', 'deep key', 's3cret', 'top secret']);
    });

    it('takes a root given with a trailing slash, or through a symlink', () => {
      expect(
        new SourceReader(`${root}/`, version).read({ objectName: 'x', sourcePath: 'db/password' }).contents.toString(),
      ).to.equal('s3cret');
      expect(
        new SourceReader(join(work, 'root-link'), version)
          .read({ objectName: 'x', sourcePath: 'db/deep/key' })
          .contents.toString(),
      ).to.equal('deep key');
      expect(
        new SourceReader(join(work, 'root-link'), version)
          .read({ objectName: 'x', sourcePath: 'link-in' })
          .contents.toString(),
      ).to.equal('s3cret');
      expect(() =>
        new SourceReader(join(work, 'root-link'), version).read({ objectName: 'x', sourcePath: 'link-out' }),
      ).to.throw(/outside the provider root/);
    });

    it('refuses an empty root (RootMissing) instead of reading from /', () => {
      try {
        new SourceReader('', version).read({ objectName: 'x', sourcePath: 'etc/hostname' });
        expect.fail('read below an empty root');
      } catch (err) {
        expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['unavailable', 'RootMissing']);
      }
    });

    for (const sourcePath of ['top', 'db/password']) {
      it(`says RootMissing, not ObjectNotFound, when the root is gone (${sourcePath})`, () => {
        try {
          new SourceReader(join(work, 'no-such-root'), version).read({ objectName: 'x', sourcePath });
          expect.fail('read a missing root');
        } catch (err) {
          expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['unavailable', 'RootMissing']);
          expect((err as SscError).message).to.equal(`file provider root ${join(work, 'no-such-root')} does not exist`);
        }
      });
    }
  });

  describe('with the content cache (a file read before is served while lstat says unchanged)', () => {
    const version = (contents: Buffer): string => `v-${contents.toString()}`;
    // A clock 5 s ahead makes files written just now settled (older than the racy window).
    const settledCache = () => new SourceContentCache(() => Date.now() + 5_000);
    const readWith = (cache: SourceContentCache, sourcePath: string) =>
      new SourceReader(root, version, cache).read({ objectName: 'x', sourcePath });
    let n = 0;
    const fresh = async (contents: string): Promise<string> => {
      const sourcePath = `cached/f${++n}`;
      await mkdir(join(root, 'cached'), { recursive: true });
      await writeFile(join(root, sourcePath), contents);
      return sourcePath;
    };

    it('serves an unchanged file from the cache, with its version', async () => {
      const cache = settledCache();
      const path = await fresh('first');
      expect(readWith(cache, path)).to.deep.include({ version: 'v-first' });
      expect(readWith(cache, path).contents.toString()).to.equal('first');
      expect(cache.hits).to.equal(1);
    });

    it('reads a file again after it is rewritten in place or replaced by rename', async () => {
      const cache = settledCache();
      const path = await fresh('first');
      readWith(cache, path);
      await writeFile(join(root, path), 'second, longer');
      expect(readWith(cache, path).contents.toString()).to.equal('second, longer');
      await writeFile(join(root, `${path}.new`), 'third!');
      await rename(join(root, `${path}.new`), join(root, path));
      expect(readWith(cache, path)).to.deep.equal({ contents: Buffer.from('third!'), version: 'v-third!' });
    });

    it('does not keep a file that changed within the racy window (real clock), and sees a same-size rewrite', async () => {
      const cache = new SourceContentCache();
      const path = await fresh('aaaa');
      expect(readWith(cache, path).contents.toString()).to.equal('aaaa');
      expect(cache.size).to.equal(0);
      await writeFile(join(root, path), 'bbbb');
      expect(readWith(cache, path).contents.toString()).to.equal('bbbb');
      expect(cache.hits).to.equal(0);
    });

    it('refuses a cached file once it is a symlink leading outside, and forgets a deleted one', async () => {
      const cache = settledCache();
      const swapped = await fresh('inside');
      const deleted = await fresh('gone soon');
      readWith(cache, swapped);
      readWith(cache, deleted);
      expect(cache.size).to.equal(2);
      await unlink(join(root, swapped));
      await symlink(join(work, 'outside'), join(root, swapped));
      expect(() => readWith(cache, swapped)).to.throw(/is outside the provider root/);
      await unlink(join(root, deleted));
      expect(() => readWith(cache, deleted)).to.throw(/not found/);
      expect(cache.size).to.equal(0);
    });
  });
});
