import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { SscError } from '../../proto/runtime/errors.js';

// Reading one object's source file strictly inside the provider root. Synchronous on
// purpose: secrets are small files under a local root, mostly in the page cache, where a
// call takes microseconds while a trip through libuv's thread pool costs ~100 µs. The
// provider does nothing else meanwhile that could wait.

/** The fields of an object this module needs (a FileObject). */
export interface SourceRef {
  readonly objectName: string;
  readonly sourcePath: string;
}

/** How an error message names the object (built only when one is thrown). */
function describe(obj: SourceRef): string {
  return `object ${JSON.stringify(obj.objectName)} (sourcePath ${JSON.stringify(obj.sourcePath)})`;
}

function notFound(obj: SourceRef): SscError {
  return new SscError('not-found', `file provider: ${describe(obj)} not found`, { reason: 'ObjectNotFound' });
}

function unreadable(obj: SourceRef, err: unknown): SscError {
  const code = (err as NodeJS.ErrnoException).code;
  return new SscError('unavailable', `file provider: ${describe(obj)} cannot be read (${code ?? 'error'})`, { reason: 'ReadFailed' });
}

/** open(2) flags of every read. O_NONBLOCK: a FIFO under the root must not hang the provider at open(2). */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * Opens `root/sourcePath` without following any symlink, when that is possible: no `..`
 * component, every directory on the way a real directory (lstat), and the file itself
 * opened with O_NOFOLLOW. Such a path cannot leave the (real) root, so no realpath(3) is
 * needed: glibc's walks the whole path once per component (~8 µs for five, against one
 * open of ~3 µs). Undefined when a symlink or `..` is on the way: the caller resolves.
 */
function openWithoutLinks(root: string, obj: SourceRef): number | undefined {
  const parts = obj.sourcePath.split('/');
  // `..` may climb out of a symlinked directory; `.` or a trailing `/` names a directory
  // (the root itself is refused as outside it): realpath decides those.
  const last = parts[parts.length - 1];
  if (parts.includes('..') || last === '' || last === '.') return undefined;
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    if (part === '' || part === '.') continue;
    dir = join(dir, part);
    let s;
    try {
      s = lstatSync(dir, { throwIfNoEntry: false });
    } catch (err) {
      throw unreadable(obj, err);
    }
    if (s === undefined || (!s.isDirectory() && !s.isSymbolicLink())) throw notFound(obj); // ENOENT / ENOTDIR, as realpath says
    if (s.isSymbolicLink()) return undefined;
  }
  try {
    return openSync(join(root, obj.sourcePath), READ_FLAGS | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return undefined; // the file itself is a symlink
    if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(obj);
    throw unreadable(obj, err);
  }
}

/** Resolves symlinks (realpath) and opens the result, refusing anything that resolves outside `root`. */
function openResolved(root: string, obj: SourceRef): number {
  let resolved: string;
  try {
    resolved = realpathSync.native(join(root, obj.sourcePath));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(obj);
    throw unreadable(obj, err);
  }
  // Checked after resolving symlinks: a link inside the root must not lead outside it.
  const rel = relative(root, resolved);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new SscError('permission-denied', `file provider: ${describe(obj)} is outside the provider root`, { reason: 'OutsideRoot' });
  }
  try {
    return openSync(resolved, READ_FLAGS);
  } catch (err) {
    throw unreadable(obj, err);
  }
}

/**
 * The whole of an open regular file of `size` bytes (as fstat said): one read(2) for a
 * small file instead of readFileSync's second fstat. A file that shrank meanwhile gives
 * what was there; size 0 (a file that does not know its size) reads to EOF.
 */
function readAll(fd: number, size: number): Buffer {
  if (size === 0) return readFileSync(fd);
  // Not from the shared pool: a secret gets memory of its own, as readFileSync gives it.
  const buf = Buffer.allocUnsafeSlow(size);
  let filled = 0;
  while (filled < size) {
    const n = readSync(fd, buf, filled, size - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return filled === size ? buf : buf.subarray(0, filled);
}

/**
 * Reads one object's source file, which must be a regular file strictly inside `root`
 * (already resolved by realpath), symlinks included. Errors name the object, never contents.
 */
export function readSourceFile(root: string, obj: SourceRef): Buffer {
  if (isAbsolute(obj.sourcePath)) throw new SscError('invalid-argument', `file provider: ${describe(obj)}: sourcePath must be relative to the provider root`, { reason: 'InvalidParameters' });
  const fd = openWithoutLinks(root, obj) ?? openResolved(root, obj);
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new SscError('invalid-argument', `file provider: ${describe(obj)} cannot be read (EISDIR)`, { reason: 'ReadFailed' });
    if (!stat.isFile()) throw new SscError('invalid-argument', `file provider: ${describe(obj)} is not a regular file`, { reason: 'ReadFailed' });
    return readAll(fd, stat.size);
  } catch (err) {
    if (err instanceof SscError) throw err;
    throw unreadable(obj, err);
  } finally {
    closeSync(fd);
  }
}
