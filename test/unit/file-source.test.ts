import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSourceFile } from '../../providers/file/source-file.js';
import { SscError } from '../../proto/runtime/errors.js';

/**
 * readSourceFile reads plain paths without realpath and leaves every path with a symlink
 * or `..` on the way to realpath: both must give the same answers, and nothing outside
 * the root, whichever way it is spelled.
 */
describe('file provider source files (readSourceFile)', () => {
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
    execFileSync('mkfifo', [join(root, 'fifo')]);
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  const read = (sourcePath: string) => readSourceFile(root, { objectName: 'x', sourcePath }).toString();
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
    ['a symlink leading outside', 'link-out', 'permission-denied', 'OutsideRoot', /"x" \(sourcePath "link-out"\) is outside the provider root/],
    ['a file below a symlinked directory leading outside', 'dir-link-out/file', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    ['.. out of the root', '../outside', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    ['.. out of a symlinked directory', 'dir-link-in/../../outside', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    ['the root itself', '.', 'permission-denied', 'OutsideRoot', /is outside the provider root/],
    ['a missing file', 'nope', 'not-found', 'ObjectNotFound', /"x" \(sourcePath "nope"\) not found/],
    ['a file below a missing directory', 'nodir/password', 'not-found', 'ObjectNotFound', /not found/],
    ['a file below a file', 'top/password', 'not-found', 'ObjectNotFound', /not found/],
    ['a dangling symlink', 'dangling', 'not-found', 'ObjectNotFound', /not found/],
    ['a directory', 'db', 'invalid-argument', 'ReadFailed', /"x" \(sourcePath "db"\) cannot be read \(EISDIR\)/],
    ['a directory spelled with a trailing /', 'db/', 'invalid-argument', 'ReadFailed', /cannot be read \(EISDIR\)/],
    ['a FIFO (without hanging)', 'fifo', 'invalid-argument', 'ReadFailed', /is not a regular file/],
    ['an absolute path', '/etc/hostname', 'invalid-argument', 'InvalidParameters', /sourcePath must be relative to the provider root/],
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
});
