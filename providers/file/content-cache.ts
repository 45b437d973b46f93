import { statfsSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { INSPECT_CUSTOM } from '../../lib/inspect-custom.js';

// The `file` provider's cache of source files it has read, so that a Mount of unchanged
// files (every pod of a class, every rotation poll) costs one lstat per file instead of
// open + fstat + read + close and an HMAC. A cached file is served only while lstat still
// describes the state it was read in (device, inode, size, mtime, ctime), and a state is
// only trusted when the file's last change (ctime) was at least RACY_WINDOW_MS before the
// read began: the kernel stamps files with a clock that may tick only every few
// milliseconds, so a write in the same tick as the read could leave every field unchanged
// (git's "racily clean" index entries). Any write after the read gets a later ctime, which
// the next lstat sees. Only files on local file systems whose stat the kernel answers
// itself are kept (not NFS, whose attribute cache may answer lstat for a minute with
// the old state, nor FAT's 2 s timestamps). What it holds is secret: memory only, never
// logged, hidden from util.inspect and JSON; bounded by entries (lru-cache), by file size,
// and by time unused: every lookup and store drops the idle files from the least recently
// used end, and a timer forgets them even when no Mount comes. (lru-cache's own TTL would
// find idle entries only by a scan of them all, or by a timer per entry.)

/** The fields of lstat(2)/fstat(2) that identify one state of a file's contents. */
export interface FileState {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** A source file's contents and their version (the provider's HMAC). */
export interface VersionedContents {
  readonly contents: Buffer;
  readonly version: string;
}

/** A file changed less than this long before a read is read again next time, whatever its stat says. */
export const RACY_WINDOW_MS = 1_000;
/** Most files kept. */
export const CONTENT_CACHE_ENTRIES = 1024;
/** Larger files are always read (1024 × 8 KiB: at most 8 MiB of contents kept). */
export const CONTENT_CACHE_MAX_FILE_BYTES = 8 * 1024;
/** A file not served for this long is forgotten (its contents do not stay in memory for good). */
export const CONTENT_CACHE_MAX_IDLE_MS = 10 * 60_000;
/** How often idle files are looked for when no Mount comes. */
export const CONTENT_CACHE_SWEEP_MS = 60_000;

/**
 * statfs(2) magic numbers of the file systems whose files may be cached: local ones,
 * whose lstat is the kernel's own view (ext2/3/4, XFS, Btrfs, tmpfs, ramfs, overlayfs,
 * F2FS, ZFS).
 */
export const CACHEABLE_FILE_SYSTEMS: ReadonlySet<number> = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x858458f6, 0x794c7630, 0xf2f52010, 0x2fc12fc1,
]);

interface Entry {
  readonly state: FileState;
  readonly source: VersionedContents;
  lastUsedMs: number;
}

/** Whether two stats describe the same state of the same file. */
export function sameState(a: FileState, b: FileState): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

/** Whether a file last changed at `ctimeMs` and read from `readStartedMs` on may be trusted unchanged while its stat is. */
export function settledBefore(ctimeMs: number, readStartedMs: number): boolean {
  return ctimeMs <= readStartedMs - RACY_WINDOW_MS;
}

/** Source files by path (root-relative paths joined to the root, as opened). */
export class SourceContentCache {
  private readonly entries = new LRUCache<string, Entry>({ max: CONTENT_CACHE_ENTRIES });
  /** Lookups answered from the cache (for tests and debugging). */
  hits = 0;
  /**
   * No file can be idle until after this (the least recently used one's last use + the
   * idle limit, lowered by every use): dropIdle's shortcut, while the clock does not step back.
   */
  private idleFromMs = Number.POSITIVE_INFINITY;

  /** Per device: whether its file system is one of CACHEABLE_FILE_SYSTEMS (64 devices at most). */
  private readonly cacheableDevices = new LRUCache<number, boolean>({ max: 64 });
  private sweeper: NodeJS.Timeout | undefined;

  /**
   * `now`: the wall clock (ms) reads are timed with, also for SourceReader's readStartedMs;
   * `fileSystemOf`: the statfs(2) type of the file system holding a path.
   */
  constructor(
    readonly now: () => number = Date.now,
    private readonly fileSystemOf: (path: string) => number = (path) => statfsSync(path).type,
  ) {}

  /** The contents of `path` if it was read in exactly the state `state` (lstat now), else undefined. */
  lookup(path: string, state: FileState): VersionedContents | undefined {
    const now = this.now();
    this.dropIdle(now);
    const entry = this.entries.get(path);
    if (entry === undefined) return undefined;
    if (!sameState(entry.state, state) || now - entry.lastUsedMs > CONTENT_CACHE_MAX_IDLE_MS) {
      this.entries.delete(path);
      return undefined;
    }
    entry.lastUsedMs = now;
    this.idleFromMs = Math.min(this.idleFromMs, now + CONTENT_CACHE_MAX_IDLE_MS);
    this.hits++;
    return entry.source;
  }

  /**
   * Keeps what was read from `path` in state `state` (fstat of the open file) by a read
   * that began at `readStartedMs`, when that state is settled and the file small enough.
   */
  remember(path: string, state: FileState, readStartedMs: number, source: VersionedContents): void {
    if (
      source.contents.length > CONTENT_CACHE_MAX_FILE_BYTES ||
      state.size !== source.contents.length ||
      !settledBefore(state.ctimeMs, readStartedMs) ||
      !this.cacheableDevice(state.dev, path)
    ) {
      this.entries.delete(path);
      return;
    }
    const now = this.now();
    this.entries.set(path, { state: copyState(state), source, lastUsedMs: now });
    this.idleFromMs = Math.min(this.idleFromMs, now + CONTENT_CACHE_MAX_IDLE_MS);
    this.dropIdle(now);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), CONTENT_CACHE_SWEEP_MS);
      this.sweeper.unref();
    }
  }

  /** Forgets the files unused for CONTENT_CACHE_MAX_IDLE_MS; the timer stops once nothing is kept. */
  sweep(): void {
    this.dropIdle(this.now());
    if (this.entries.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Whether files on device `dev` (that of `path`) may be cached; asked once per device. */
  private cacheableDevice(dev: number, path: string): boolean {
    let cacheable = this.cacheableDevices.get(dev);
    if (cacheable === undefined) {
      try {
        cacheable = CACHEABLE_FILE_SYSTEMS.has(this.fileSystemOf(path));
      } catch {
        return false;
      }
      this.cacheableDevices.set(dev, cacheable);
    }
    return cacheable;
  }

  /** Forgets `path` (gone, or no longer a plain file). */
  forget(path: string): void {
    this.entries.delete(path);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Least recently used first: drops the entries unused for CONTENT_CACHE_MAX_IDLE_MS,
   * stopping at the first one in use (the order of use is the order of lastUsedMs). Most
   * calls find nothing can be idle yet and return at once.
   */
  private dropIdle(now: number): void {
    if (now <= this.idleFromMs) return;
    for (;;) {
      const oldest = this.entries.rkeys().next();
      if (oldest.done === true) {
        this.idleFromMs = Number.POSITIVE_INFINITY;
        return;
      }
      const entry = this.entries.peek(oldest.value);
      if (entry !== undefined && now - entry.lastUsedMs <= CONTENT_CACHE_MAX_IDLE_MS) {
        this.idleFromMs = entry.lastUsedMs + CONTENT_CACHE_MAX_IDLE_MS;
        return;
      }
      this.entries.delete(oldest.value);
    }
  }

  toString(): string {
    return `SourceContentCache(${this.entries.size} files)`;
  }

  toJSON(): { files: number } {
    return { files: this.entries.size };
  }

  [INSPECT_CUSTOM](): string {
    return this.toString();
  }
}

/** Only the identifying numbers: a Stats object would keep its other fields (and Dates) alive. */
function copyState(s: FileState): FileState {
  return { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs };
}
