import { lstatSync, realpathSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SscError } from '../../lib/errors.js';
import { DATA_DIR_LINK } from '../volume/atomic-writer.js';
import { mountPointSet } from './mountinfo.js';
import { loadMountSyscalls, type MountSyscalls } from './mount-syscalls.js';
import { ancestorsOf, holdsDataLink, isBelow, volumesBelow } from './nesting.js';

/** How long a mountinfo snapshot answers "is it mounted?" (see TmpfsMounter.mountPoints). */
const MOUNTINFO_TTL_MS = 250;

/** Puts an empty, private filesystem at a target path and takes it away again. */
export interface Mounter {
  /** True when the target path already holds our volume (decided from mountinfo for tmpfs). */
  isMounted(targetPath: string): Promise<boolean>;
  /** Creates the directory (0750) if missing and mounts the volume there. */
  mount(targetPath: string): Promise<void>;
  /** Unmounts (if mounted) and removes the directory; a missing path is success. */
  unmount(targetPath: string): Promise<void>;
  /**
   * Throws unless the target is still where secrets may be written, checked right before
   * a write (a provider call may take seconds, and someone may unmount meanwhile).
   */
  assertWritable(targetPath: string): void;
  /**
   * The written volumes (resolved paths) that contain `resolvedTarget` or lie below it,
   * so a publish never nests one volume in another.
   */
  volumesNear(resolvedTarget: string): Promise<string[]>;
}

/**
 * realpath(3) of a target, or undefined when it does not exist. Synchronous: a local path
 * resolves in microseconds, while a trip through libuv's thread pool costs ~100 µs, and a
 * first publish asks this three times.
 */
async function resolvedOrUndefined(path: string): Promise<string | undefined> {
  try {
    return realpathSync.native(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function commandError(what: string, reason: string, err: unknown): SscError {
  const code = (err as NodeJS.ErrnoException).code;
  const detail = String((err as { stderr?: unknown }).stderr ?? '').trim() || (err as Error).message;
  return new SscError(
    'failed-precondition',
    `${what} failed${code ? ` (${code})` : ''}${detail ? `: ${detail}` : ''}`,
    { reason, cause: err },
  );
}

/**
 * The source name a driver gives its tmpfs mounts: `secrets-store-csi:<CSI socket path>`.
 * It marks a mount as this driver instance's in mountinfo (and in `df`), so work done on
 * mounts found there at start (crash repair) never touches kubelet's Secret volumes, a
 * pod's memory-backed emptyDir or another driver instance's volumes.
 */
export function volumeMountSource(socketPath: string): string {
  return `secrets-store-csi:${socketPath}`;
}

/**
 * Mounts a tmpfs at each target path, so secrets never touch the node's disk.
 * "Already mounted" comes from /proc/self/mountinfo, never from directory metadata.
 */
export class TmpfsMounter implements Mounter {
  private snapshot: { readAt: number; points: Set<string> } | undefined;
  /** Bumped by every mount and unmount of this mounter; reads that started before are not kept. */
  private generation = 0;

  private invalidate(): void {
    this.snapshot = undefined;
    this.generation++;
  }

  /**
   * After our own mount: the snapshot gains the new mount point instead of being dropped,
   * so a burst of first publishes (many pods starting) does not re-read mountinfo for each.
   */
  private recordMount(resolvedTarget: string | undefined): void {
    this.generation++;
    if (resolvedTarget === undefined) this.snapshot = undefined;
    else this.snapshot?.points.add(resolvedTarget);
  }

  constructor(
    private readonly syscalls: MountSyscalls = loadMountSyscalls(),
    private readonly mountInfoPath = '/proc/self/mountinfo',
    private readonly now: () => number = Date.now,
    /** The source name of this driver's mounts in mountinfo (see volumeMountSource). */
    private readonly source = 'tmpfs',
  ) {}

  /**
   * A mount point sits on another device than its parent directory; a target that shares
   * its parent's device is a plain directory on the node's disk, and secrets never go
   * there. Two lstat(2) calls: no mountinfo read, so no snapshot can make it stale.
   */
  assertWritable(targetPath: string): void {
    const target = lstatSync(targetPath, { throwIfNoEntry: false });
    const parent = lstatSync(dirname(targetPath), { throwIfNoEntry: false });
    if (target?.isDirectory() && parent !== undefined && target.dev !== parent.dev) return;
    throw new SscError(
      'failed-precondition',
      `${targetPath} is no longer a mount point; refusing to write secrets to the node's disk`,
      { reason: 'TargetNotMounted' },
    );
  }

  /** How mounts are made: "syscall" (the addon) or "mount-program". */
  get implementation(): string {
    return this.syscalls.kind;
  }

  async isMounted(targetPath: string): Promise<boolean> {
    // mountinfo lists resolved paths, and one of them cannot lead through a symlink: a
    // target path found there as given is mounted, without a realpath(3) round trip.
    if ((await this.mountPoints()).has(targetPath)) return true;
    const resolved = await resolvedOrUndefined(targetPath);
    return resolved !== undefined && resolved !== targetPath && (await this.mountPoints()).has(resolved);
  }

  /**
   * The mount points, read from mountinfo at most every 250 ms: a rotation round asks for
   * hundreds of volumes, and re-parsing a file of hundreds of lines each time made rounds
   * quadratic. This mounter's own mounts and unmounts drop the snapshot at once, so its
   * decisions never rest on a stale view of what it did itself.
   */
  private async mountPoints(): Promise<ReadonlySet<string>> {
    const now = this.now();
    if (this.snapshot && now - this.snapshot.readAt <= MOUNTINFO_TTL_MS) return this.snapshot.points;
    const generation = this.generation;
    const points = mountPointSet(await readFile(this.mountInfoPath, 'utf8'));
    // A read that started before one of our own mounts or unmounts may be stale: use it
    // for this answer (it was true when read) but never keep it.
    if (generation === this.generation) this.snapshot = { readAt: now, points };
    return points;
  }

  /** Mount points (from mountinfo) around the target that hold `..data`: our volumes. */
  async volumesNear(resolvedTarget: string): Promise<string[]> {
    const points = await this.mountPoints();
    const near = ancestorsOf(resolvedTarget).filter((p) => points.has(p));
    for (const p of points) if (isBelow(p, resolvedTarget)) near.push(p);
    const volumes: string[] = [];
    for (const p of near) if (await holdsDataLink(p)) volumes.push(p);
    return volumes;
  }

  async mount(targetPath: string): Promise<void> {
    // Through the thread pool, unlike the lookups: mkdir(2) writes to the node's disk (kubelet's
    // directory), which may take a millisecond or more that the event loop must not wait out.
    const created = await mkdir(targetPath, { recursive: true, mode: 0o750 });
    try {
      // mode=0755: pods running as non-root must read the files but never write.
      await this.syscalls.mountTmpfs(targetPath, 'mode=0755', this.source);
      this.recordMount(await resolvedOrUndefined(targetPath).catch(() => undefined));
    } catch (err) {
      // Leave nothing behind: remove the directory if this call made it.
      if (created !== undefined) await rmdir(targetPath).catch(() => undefined);
      throw commandError(`mounting tmpfs at ${targetPath}`, 'FailedToMount', err);
    }
  }

  async unmount(targetPath: string): Promise<void> {
    if ((await resolvedOrUndefined(targetPath)) === undefined) return;
    while (await this.isMounted(targetPath)) {
      try {
        await this.syscalls.unmount(targetPath);
        this.invalidate();
      } catch (err) {
        // EINVAL: not a mount point (any more); the snapshot was older than the truth.
        if ((err as NodeJS.ErrnoException).code === 'EINVAL') {
          this.invalidate();
          break;
        }
        throw commandError(`unmounting ${targetPath}`, 'FailedToUnmount', err);
      }
    }
    try {
      await rmdir(targetPath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code === 'ENOTEMPTY') {
        throw new SscError(
          'failed-precondition',
          `${targetPath} is not a mount point and is not empty; leaving it in place`,
          { reason: 'FailedToUnmount' },
        );
      }
      throw err;
    }
  }
}

/**
 * Writes into a plain directory (`--mount-mode=dir`, local mode only) for machines
 * where the driver may not mount. "Mounted" means the directory holds a written
 * payload (the atomic writer's `..data` link).
 */
export class DirMounter implements Mounter {
  async isMounted(targetPath: string): Promise<boolean> {
    return holdsDataLink(targetPath);
  }

  /** No mountinfo lists plain directories: ancestors holding `..data`, and a search below. */
  async volumesNear(resolvedTarget: string): Promise<string[]> {
    const above: string[] = [];
    for (const a of ancestorsOf(resolvedTarget)) if (await holdsDataLink(a)) above.push(a);
    return [...above, ...(await volumesBelow(resolvedTarget))];
  }

  async mount(targetPath: string): Promise<void> {
    await mkdir(targetPath, { recursive: true, mode: 0o750 });
  }

  /** Local dir mode writes into plain directories by design. */
  assertWritable(): void {}

  async unmount(targetPath: string): Promise<void> {
    const entries = await readdir(targetPath).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (entries === undefined) return;
    // Only remove what the atomic writer made: never rm -rf a directory we did not fill.
    if (entries.length > 0 && !entries.includes(DATA_DIR_LINK)) {
      throw new SscError(
        'failed-precondition',
        `${targetPath} holds files that were not written by this driver; leaving it in place`,
        { reason: 'FailedToUnmount' },
      );
    }
    await rm(targetPath, { recursive: true, force: true });
  }
}
