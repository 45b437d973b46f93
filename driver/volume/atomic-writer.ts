import { chmodSync, lstatSync, mkdtempSync, renameSync, symlinkSync, unlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SscError, toSscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import { Pacer } from '../../lib/pacer.js';
import type { Payload } from './payload.js';
import {
  DATA_DIR_LINK,
  DATA_DIR_TMP_LINK,
  readDataLink,
  repairCounts,
  repaired,
  repairTarget,
} from './payload-repair.js';
import { dirModeFor, ownLink, ownTopLevel } from './ownership.js';
import { readState, setDirGroup, stateOf, writeFiles } from './payload-files.js';
import { removeTree } from './remove-tree.js';
import { planWrite, type FileState, type WritePlan } from './write-plan.js';

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
export type WriteStep =
  'payload-dir-created' | 'payload-written' | 'links-added' | 'data-swapped' | 'links-removed' | 'old-payload-removed';

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
  const date = [now.getUTCFullYear(), p(now.getUTCMonth() + 1), p(now.getUTCDate())];
  const time = [p(now.getUTCHours()), p(now.getUTCMinutes()), p(now.getUTCSeconds())];
  return `..${[...date, ...time].join('_')}.`;
}

/** What the writer knows of a target it wrote: the payload directory and digests, never contents. */
interface KnownTarget<Tag> {
  readonly dataDir: string;
  readonly files: ReadonlyMap<string, FileState>;
  readonly links: readonly string[];
  /** The caller's note on the last write (the publisher: the object versions). */
  readonly tag: Tag | undefined;
  /** The mount group the last write was made for (undefined: none was named). */
  readonly gid: number | undefined;
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
 *
 * With a mount group (the pod's fsGroup, CSI volume_mount_group) every file, directory and
 * link it writes, and the target directory itself, get that group and the modes of
 * ownership.ts, all before the swap: the pod never sees a file of the wrong group, and a
 * write for another group rewrites the volume as a change of content would.
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

  /**
   * True when this writer's last write to `targetDir` was for mount group `gid` (undefined:
   * none), while `..data` still points where it went.
   */
  wroteFor(targetDir: string, gid: number | undefined): boolean {
    const known = this.known.get(targetDir);
    return known !== undefined && known.gid === gid && readDataLink(targetDir) === known.dataDir;
  }

  /**
   * Writes `payload` into `targetDir` unless every byte and mode (and with mount group
   * `gid`, every file's group) already matches.
   */
  async write(
    targetDir: string,
    payload: Payload,
    volatile: Payload,
    now: Date,
    tag?: Tag,
    gid?: number,
  ): Promise<WriteResult> {
    const pacer = new Pacer(this.options.sliceMs);
    const cached = this.known.get(targetDir);
    // A target this writer knows nothing of is repaired below, which reads `..data` itself.
    let oldDirName = cached === undefined ? undefined : readDataLink(targetDir);
    // Trusted only while `..data` still leads where this writer put it (one lstat).
    const trusted =
      cached !== undefined &&
      oldDirName === cached.dataDir &&
      !this.cleanupOwed.has(targetDir) &&
      lstatSync(join(targetDir, cached.dataDir), { throwIfNoEntry: false })?.isDirectory() === true
        ? cached
        : undefined;
    let links = trusted?.links;
    if (trusted === undefined) {
      // Not written by this process (a restart) or not cleaned up: mend leftovers first.
      const repair = await repairTarget(targetDir, pacer);
      if (repaired(repair))
        this.options.logger?.info('repaired a volume left incomplete by an earlier write', {
          targetPath: targetDir,
          ...repairCounts(repair),
        });
      this.cleanupOwed.delete(targetDir);
      oldDirName = repair.dataDir;
      links = repair.links;
    }
    const current =
      trusted?.files ??
      (oldDirName === undefined
        ? undefined
        : await readState(join(targetDir, oldDirName), new Set(volatile.keys()), pacer));
    const desired = await stateOf(payload, gid, pacer);
    const plan = await planWrite(current, desired, links ?? [], pacer);
    // planWrite reports a change whenever nothing is on disk yet, so oldDirName is set here.
    if (!plan.changed && oldDirName !== undefined && current) {
      this.known.set(targetDir, { dataDir: oldDirName, files: current, links: links ?? [], tag, gid });
      return { changed: false, dataDir: oldDirName };
    }
    this.known.delete(targetDir);
    const dataDir = await this.swapIn(targetDir, [payload, volatile], now, plan, oldDirName, gid, pacer);
    this.known.set(targetDir, { dataDir, files: desired, links: plan.wantedLinks, tag, gid });
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
  private async swapIn(
    targetDir: string,
    files: readonly Payload[],
    now: Date,
    plan: WritePlan,
    oldDirName: string | undefined,
    gid: number | undefined,
    pacer: Pacer,
  ): Promise<string> {
    const newDir = mkdtempSync(join(targetDir, timestampedPrefix(now)));
    const added: string[] = [];
    try {
      if (gid === undefined) chmodSync(newDir, 0o755);
      else setDirGroup(newDir, gid, dirModeFor(0o755, gid));
      this.step('payload-dir-created', targetDir);
      await writeFiles(newDir, files, gid, pacer);
      this.step('payload-written', targetDir);
      // Links for new names first, as kubelet does: until the swap they lead nowhere (the
      // old payload has no such name), and after it every name resolves at once. A name
      // taken by something else fails symlink(2) with EEXIST before the swap, so the
      // refused write is undone and the old payload stays (no lstat of every name first).
      for (const name of plan.linksToAdd) {
        addLink(targetDir, name);
        added.push(name);
        if (pacer.due()) await pacer.pause();
      }
      this.step('links-added', targetDir);
      if (gid !== undefined) await ownTopLevel(targetDir, plan.wantedLinks, gid, pacer);
      const tmpLink = join(targetDir, DATA_DIR_TMP_LINK);
      // Only left by a crash (repair removes it): one lstat, no exception, in the usual case.
      if (lstatSync(tmpLink, { throwIfNoEntry: false }) !== undefined) unlinkSync(tmpLink);
      symlinkSync(basename(newDir), tmpLink);
      if (gid !== undefined) ownLink(tmpLink, gid);
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
      this.options.logger?.warn('new payload is live, but removing the old one failed; retrying on the next write', {
        targetPath: targetDir,
        error: toSscError(err).message,
      });
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
      this.options.logger?.warn('could not remove an unfinished payload; it is removed on the next write', {
        targetPath: targetDir,
        error: toSscError(err).message,
      });
    }
  }
}

/** Adds the link `name -> ..data/name`; a name already taken is refused, naming it. */
function addLink(targetDir: string, name: string): void {
  try {
    symlinkSync(`${DATA_DIR_LINK}/${name}`, join(targetDir, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    throw new SscError(
      'failed-precondition',
      `${join(targetDir, name)} exists and is not a link into ${DATA_DIR_LINK}; refusing to replace it`,
    );
  }
}

/** Writes atomically without remembering anything (tests, one-off writes). */
export async function writeAtomically(
  targetDir: string,
  payload: Payload,
  volatile: Payload,
  now: Date,
  gid?: number,
): Promise<WriteResult> {
  return new AtomicWriter().write(targetDir, payload, volatile, now, undefined, gid);
}
