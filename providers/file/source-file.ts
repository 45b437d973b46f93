import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { SscError } from '../../lib/errors.js';
import type { SourceContentCache, VersionedContents } from './content-cache.js';
import { invalid } from './config.js';

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
  return new SscError('unavailable', `file provider: ${describe(obj)} cannot be read (${code ?? 'error'})`, {
    reason: 'ReadFailed',
  });
}

/** open(2) flags of every read. O_NONBLOCK: a FIFO under the root must not hang the provider at open(2). */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** How a reader turns contents into their version (the provider's HMAC). */
export type VersionOf = (contents: Buffer) => string;

/**
 * Reads objects' source files strictly inside one provider root, for one Mount. It
 * resolves the root's realpath once something needs it, and it builds paths by
 * concatenating checked components instead of path.join, which allocates on every call
 * (bench/README.md, "What the first-publish and `file` provider changes bought"). With a SourceContentCache, a file
 * whose lstat still matches what was read is not read again.
 */
export class SourceReader {
  /** The root without a trailing slash ('' for '/'), as given (a symlinked root is followed). */
  private readonly base: string;
  private resolvedRoot: string | undefined;

  /** `root`: the provider's --root (an empty one is refused: every read says RootMissing). */
  constructor(
    private readonly root: string,
    private readonly versionOf: VersionOf,
    private readonly cache?: SourceContentCache,
  ) {
    this.base = root.endsWith('/') ? root.slice(0, -1) : root;
  }

  /** The root's realpath (once); RootMissing when it does not exist. */
  realRoot(): string {
    if (this.root === '')
      throw new SscError('unavailable', 'file provider root "" does not exist', { reason: 'RootMissing' });
    if (this.resolvedRoot === undefined) {
      try {
        this.resolvedRoot = realpathSync.native(this.root);
      } catch {
        throw new SscError('unavailable', `file provider root ${this.root} does not exist`, { reason: 'RootMissing' });
      }
    }
    return this.resolvedRoot;
  }

  /**
   * One object's source file and its version. The file must be a regular file strictly
   * inside the root, symlinks included. Errors name the object, never contents.
   */
  read(obj: SourceRef): VersionedContents {
    if (this.root === '') this.realRoot();
    if (isAbsolute(obj.sourcePath)) throw invalid(`${describe(obj)}: sourcePath must be relative to the provider root`);
    const path = this.pathWithoutLinks(obj);
    if (path !== undefined) {
      const served = this.readPlain(path, obj);
      if (served !== undefined) return served;
    }
    return this.readFd(openResolved(this.realRoot(), obj), obj, undefined, 0);
  }

  /**
   * `root/sourcePath` when no symlink and no `..` is on the way to it: no `..` component,
   * every directory a real directory (lstat). Such a path cannot leave the root, so no
   * realpath(3) is needed: glibc's walks the whole path once per component (~8 µs for
   * five, against one open of ~3 µs). Undefined when the caller must resolve.
   */
  private pathWithoutLinks(obj: SourceRef): string | undefined {
    const parts = obj.sourcePath.split('/');
    // `..` may climb out of a symlinked directory; `.` or a trailing `/` names a directory
    // (the root itself is refused as outside it): realpath decides those.
    const last = parts[parts.length - 1]!;
    if (parts.includes('..') || last === '' || last === '.') return undefined;
    let path = this.base;
    for (let i = 0; i < parts.length - 1; i++) {
      const part = parts[i]!;
      if (part === '' || part === '.') continue;
      path += `/${part}`;
      // Checked for every object, not once per Mount: a folder swapped for a symlink
      // leading out of the root must be caught as close to the open as lstat allows.
      if (!this.checkDirectory(path, obj)) return undefined;
    }
    return `${path}/${last}`;
  }

  /**
   * Reads a path with no symlink on the way, the file itself opened with O_NOFOLLOW
   * (cached contents when lstat says it is unchanged). Undefined when the file is a symlink.
   */
  private readPlain(path: string, obj: SourceRef): VersionedContents | undefined {
    let readStartedMs = 0;
    if (this.cache) {
      let state;
      try {
        state = lstatSync(path, { throwIfNoEntry: false });
      } catch (err) {
        throw this.openFailed(err, obj);
      }
      if (state === undefined) {
        this.cache.forget(path);
        throw this.notFound(obj);
      }
      if (state.isSymbolicLink()) {
        this.cache.forget(path);
        return undefined;
      }
      const cached = this.cache.lookup(path, state);
      if (cached !== undefined) return cached;
      readStartedMs = this.cache.now();
    }
    let fd: number;
    try {
      fd = openSync(path, READ_FLAGS | constants.O_NOFOLLOW);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ELOOP') return undefined; // the file itself is a symlink
      throw this.openFailed(err, obj);
    }
    return this.readFd(fd, obj, path, readStartedMs);
  }

  /** Reads and closes an open source file (remembered under `cachePath` when there is a cache). */
  private readFd(fd: number, obj: SourceRef, cachePath: string | undefined, readStartedMs: number): VersionedContents {
    try {
      const stat = fstatSync(fd);
      if (stat.isDirectory())
        throw new SscError('invalid-argument', `file provider: ${describe(obj)} cannot be read (EISDIR)`, {
          reason: 'ReadFailed',
        });
      if (!stat.isFile())
        throw new SscError('invalid-argument', `file provider: ${describe(obj)} is not a regular file`, {
          reason: 'ReadFailed',
        });
      const contents = readAll(fd, stat.size);
      const served = { contents, version: this.versionOf(contents) };
      if (this.cache && cachePath !== undefined) this.cache.remember(cachePath, stat, readStartedMs, served);
      return served;
    } catch (err) {
      if (cachePath !== undefined) this.cache?.forget(cachePath);
      if (err instanceof SscError) throw err;
      throw unreadable(obj, err);
    } finally {
      closeSync(fd);
    }
  }

  /** True for a real directory, false for a symlink; not-found (ENOENT / ENOTDIR, as realpath says) otherwise. */
  private checkDirectory(path: string, obj: SourceRef): boolean {
    let s;
    try {
      s = lstatSync(path, { throwIfNoEntry: false });
    } catch (err) {
      throw unreadable(obj, err);
    }
    if (s === undefined || (!s.isDirectory() && !s.isSymbolicLink())) throw this.notFound(obj);
    return !s.isSymbolicLink();
  }

  /** The error for an lstat or open of the file that failed: not found (ENOENT / ENOTDIR), else unreadable. */
  private openFailed(err: unknown, obj: SourceRef): SscError {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? this.notFound(obj) : unreadable(obj, err);
  }

  /** ObjectNotFound, or RootMissing when it is the root that is gone. */
  private notFound(obj: SourceRef): SscError {
    this.realRoot();
    return notFound(obj);
  }
}

/** Resolves symlinks (realpath) and opens the result, refusing anything that resolves outside `root` (a realpath). */
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
    throw new SscError('permission-denied', `file provider: ${describe(obj)} is outside the provider root`, {
      reason: 'OutsideRoot',
    });
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
