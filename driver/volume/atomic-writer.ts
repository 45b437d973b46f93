import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SscError, toSscError } from '../../proto/runtime/errors.js';
import type { Logger } from '../../proto/runtime/logger.js';
import { Pacer } from '../../proto/runtime/pacer.js';
import type { Payload } from './payload.js';
import { DATA_DIR_LINK, DATA_DIR_TMP_LINK, readDataLink, repairCounts, repaired, repairTarget } from './payload-repair.js';
import { dirEntries } from './dir-entries.js';
import { removeTree } from './remove-tree.js';
import { planWrite, sha256, type FileState, type WritePlan } from './write-plan.js';

export { DATA_DIR_LINK } from './payload-repair.js';

/** The outcome of one write. */
export interface WriteResult {
  /** False when nothing changed and nothing was written. */
  readonly changed: boolean;
  /** The payload directory `..data` points at after the write. */
  readonly dataDir: string;
}

/**
 * The steps of a write, in order; a crash after any of them leaves a target that
 * repairTarget brings back to the old or the new payload, whole.
 */
export type WriteStep = 'payload-dir-created' | 'payload-written' | 'links-added' | 'data-swapped' | 'links-removed' | 'old-payload-removed';

/** Options of the writer. */
export interface AtomicWriterOptions {
  /** Where a failed cleanup after a successful swap is reported. */
  readonly logger?: Logger;
  /** Called after each step of a write: the fault point crash tests use. */
  readonly onStep?: (step: WriteStep, targetDir: string) => void;
  /** How long a large write may hold the event loop before it yields (ms). */
  readonly sliceMs?: number;
}

/** Kubelet-style hidden directory name prefix: `..2026_11_22_00_12_09.`. */
function timestampedPrefix(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.`;
}

/** Reads mode and digest of every file under `dir`, skipping paths in `skip`; no recursion. */
async function readState(dir: string, skip: ReadonlySet<string>, pacer: Pacer): Promise<Map<string, FileState>> {
  const state = new Map<string, FileState>();
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    for await (const entry of dirEntries(join(dir, rel), pacer)) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(path);
      else if (!skip.has(path)) {
        const full = join(dir, path);
        state.set(path, { mode: lstatSync(full).mode & 0o7777, sha256: sha256(readFileSync(full)) });
      }
    }
  }
  return state;
}

/** Mode and digest of every file of a payload (what the writer remembers instead of bytes). */
async function stateOf(payload: Payload, pacer: Pacer): Promise<Map<string, FileState>> {
  const state = new Map<string, FileState>();
  for (const [path, f] of payload) {
    state.set(path, { mode: f.mode, sha256: sha256(f.contents) });
    if (pacer.due()) await pacer.pause();
  }
  return state;
}

/** chmod `path` to `mode` unless creating it with `mode` under `umask` already gave exactly that. */
function ensureMode(path: string, mode: number, umask: number): void {
  if ((mode & ~umask) !== mode) chmodSync(path, mode);
}

async function writeFiles(dir: string, payloads: readonly Payload[], pacer: Pacer): Promise<void> {
  // Read per write: chmod is only needed where the umask would narrow a requested mode.
  const umask = process.umask();
  // Each path's parents in order of length, so a directory always comes before its
  // children without sorting (sorting 120,000 long, shared-prefix names took ~100 ms).
  const dirs = new Set<string>();
  for (const files of payloads) {
    for (const path of files.keys()) {
      for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) dirs.add(path.slice(0, slash));
      if (pacer.due()) await pacer.pause();
    }
  }
  for (const d of dirs) {
    mkdirSync(join(dir, d), { mode: 0o755 });
    ensureMode(join(dir, d), 0o755, umask); // not narrowed by the umask: non-root pods must traverse it
    if (pacer.due()) await pacer.pause();
  }
  for (const files of payloads) {
    for (const [path, file] of files) {
      const full = join(dir, path);
      writeFileSync(full, file.contents, { mode: file.mode, flag: 'wx' });
      ensureMode(full, file.mode, umask); // the process umask must not narrow what the provider asked for
      if (pacer.due()) await pacer.pause();
    }
  }
}

/** What the writer knows of a target it wrote: the payload directory and digests, never contents. */
interface KnownTarget<Tag> {
  readonly dataDir: string;
  readonly files: ReadonlyMap<string, FileState>;
  readonly links: readonly string[];
  /** The caller's note on the last write (the publisher: the object versions). */
  readonly tag: Tag | undefined;
}

/**
 * Writes payloads into target directories the way kubelet's AtomicWriter does for Secret
 * volumes: a new hidden timestamped directory, links for new top-level names (dangling
 * until the swap), the `..data` link swapped by rename(2), then obsolete links and the old
 * directory removed. A reader sees the old set or the new set, never a mix, and a crash
 * (SIGKILL) between any two steps leaves a target that repairTarget mends without loss.
 * `volatile` files are written with the payload but not compared, so a write time alone
 * never causes a rewrite.
 *
 * Its file-system calls are synchronous, on purpose: the target is a tmpfs the driver
 * mounted (or, in local dir mode, a small directory), so each call is a memory operation
 * of microseconds, while a trip through libuv's thread pool costs ~100 µs here. A large
 * payload (hundreds of thousands of files) yields to the event loop every few
 * milliseconds instead of holding it for seconds.
 *
 * It remembers the SHA-256 digests of what it wrote (never the bytes), so deciding that
 * nothing changed costs one readlink instead of reading every file back; a target it did
 * not write (or whose `..data` moved) is repaired and read from disk. Each write may carry
 * a `tag` (what the caller wants to recall about it) that `tagOf` returns on the same terms.
 */
export class AtomicWriter<Tag = never> {
  private readonly known = new Map<string, KnownTarget<Tag>>();
  /** Targets whose last cleanup failed after a successful swap: repaired on the next write. */
  private readonly cleanupOwed = new Set<string>();

  constructor(private readonly options: AtomicWriterOptions = {}) {}

  /** The tag of the last write to `targetDir`, while `..data` still points where it went (else undefined). */
  tagOf(targetDir: string): Tag | undefined {
    const known = this.known.get(targetDir);
    return known !== undefined && readDataLink(targetDir) === known.dataDir ? known.tag : undefined;
  }

  /** Writes `payload` into `targetDir` unless every byte and mode already matches. */
  async write(targetDir: string, payload: Payload, volatile: Payload, now: Date, tag?: Tag): Promise<WriteResult> {
    const pacer = new Pacer(this.options.sliceMs);
    const cached = this.known.get(targetDir);
    let oldDirName = readDataLink(targetDir);
    // Trusted only while `..data` still leads where this writer put it (one lstat).
    const trusted = cached !== undefined && oldDirName === cached.dataDir && !this.cleanupOwed.has(targetDir)
      && lstatSync(join(targetDir, cached.dataDir), { throwIfNoEntry: false })?.isDirectory() === true ? cached : undefined;
    let links = trusted?.links;
    if (trusted === undefined) {
      // Not written by this process (a restart) or not cleaned up: mend leftovers first.
      const repair = await repairTarget(targetDir, pacer);
      if (repaired(repair)) this.options.logger?.info('repaired a volume left incomplete by an earlier write', { targetPath: targetDir, ...repairCounts(repair) });
      this.cleanupOwed.delete(targetDir);
      oldDirName = repair.dataDir;
      links = repair.links;
    }
    const current = trusted?.files ?? (oldDirName === undefined ? undefined : await readState(join(targetDir, oldDirName), new Set(volatile.keys()), pacer));
    const desired = await stateOf(payload, pacer);
    const plan = await planWrite(current, desired, links ?? [], pacer);
    // planWrite reports a change whenever nothing is on disk yet, so oldDirName is set here.
    if (!plan.changed && oldDirName !== undefined && current) {
      this.known.set(targetDir, { dataDir: oldDirName, files: current, links: links ?? [], tag });
      return { changed: false, dataDir: oldDirName };
    }
    this.known.delete(targetDir);
    const dataDir = await this.swapIn(targetDir, [payload, volatile], now, plan, oldDirName, pacer);
    this.known.set(targetDir, { dataDir, files: desired, links: plan.wantedLinks, tag });
    return { changed: true, dataDir };
  }

  /** Forgets a target (after unpublish). */
  forget(targetDir: string): void {
    this.known.delete(targetDir);
    this.cleanupOwed.delete(targetDir);
  }

  private step(step: WriteStep, targetDir: string): void {
    this.options.onStep?.(step, targetDir);
  }

  /** Writes the new payload directory, adds links, swaps `..data`, cleans up; returns the new directory's name. */
  private async swapIn(targetDir: string, files: readonly Payload[], now: Date, plan: WritePlan, oldDirName: string | undefined, pacer: Pacer): Promise<string> {
    // Checked before anything is written, so a refused write leaves the old payload intact.
    for (const name of plan.linksToAdd) {
      if (lstatSync(join(targetDir, name), { throwIfNoEntry: false }) !== undefined) {
        throw new SscError('failed-precondition', `${join(targetDir, name)} exists and is not a link into ${DATA_DIR_LINK}; refusing to replace it`);
      }
      if (pacer.due()) await pacer.pause();
    }
    const newDir = mkdtempSync(join(targetDir, timestampedPrefix(now)));
    const added: string[] = [];
    try {
      chmodSync(newDir, 0o755);
      this.step('payload-dir-created', targetDir);
      await writeFiles(newDir, files, pacer);
      this.step('payload-written', targetDir);
      // Links for new names first, as kubelet does: until the swap they lead nowhere (the
      // old payload has no such name), and after it every name resolves at once.
      for (const name of plan.linksToAdd) {
        symlinkSync(`${DATA_DIR_LINK}/${name}`, join(targetDir, name));
        added.push(name);
        if (pacer.due()) await pacer.pause();
      }
      this.step('links-added', targetDir);
      const tmpLink = join(targetDir, DATA_DIR_TMP_LINK);
      rmSync(tmpLink, { force: true });
      symlinkSync(basename(newDir), tmpLink);
      renameSync(tmpLink, join(targetDir, DATA_DIR_LINK));
    } catch (err) {
      await this.undo(targetDir, newDir, added, pacer);
      throw err;
    }
    this.step('data-swapped', targetDir);
    // The new payload is live: the write has succeeded, whatever the cleanup below meets.
    try {
      for (const name of plan.linksToRemove) {
        unlinkSync(join(targetDir, name));
        if (pacer.due()) await pacer.pause();
      }
      this.step('links-removed', targetDir);
      if (oldDirName !== undefined) await removeTree(join(targetDir, oldDirName), pacer);
      this.step('old-payload-removed', targetDir);
    } catch (err) {
      this.cleanupOwed.add(targetDir);
      this.options.logger?.warn('new payload is live, but removing the old one failed; retrying on the next write', { targetPath: targetDir, error: toSscError(err).message });
    }
    return basename(newDir);
  }

  /** Takes back a write that failed before the swap: its links and its directory. */
  private async undo(targetDir: string, newDir: string, added: readonly string[], pacer: Pacer): Promise<void> {
    try {
      for (const name of added) {
        unlinkSync(join(targetDir, name));
        if (pacer.due()) await pacer.pause();
      }
      await removeTree(newDir, pacer);
    } catch (err) {
      // Whatever is left is repaired by the next write (the target is no longer trusted).
      this.cleanupOwed.add(targetDir);
      this.options.logger?.warn('could not remove an unfinished payload; it is removed on the next write', { targetPath: targetDir, error: toSscError(err).message });
    }
  }
}

/** Writes atomically without remembering anything (tests, one-off writes). */
export async function writeAtomically(targetDir: string, payload: Payload, volatile: Payload, now: Date): Promise<WriteResult> {
  return new AtomicWriter().write(targetDir, payload, volatile, now);
}
