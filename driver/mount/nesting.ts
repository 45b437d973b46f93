import { lstatSync, realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SscError } from '../../lib/errors.js';
import { DATA_DIR_LINK } from '../volume/atomic-writer.js';

/** A volume a new target would overlap: the target lies inside it, or it lies inside the target. */
export interface Overlap {
  /** The other volume's resolved path. */
  readonly volume: string;
  /** True when the target is inside `volume`; false when `volume` is inside the target. */
  readonly targetInside: boolean;
}

/** True when clean absolute path `inner` lies strictly below `outer`. */
export function isBelow(inner: string, outer: string): boolean {
  return outer === '/' ? inner !== '/' : inner.startsWith(`${outer}/`);
}

/** The strict ancestors of a clean absolute path, nearest first, "/" last. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = dirname(path); ; p = dirname(p)) {
    if (p === path) return out;
    out.push(p);
    if (p === '/') return out;
  }
}

/**
 * The first of `volumes` that contains `target` or lies below it (all resolved, clean,
 * absolute). A volume equal to the target is the target itself, not an overlap.
 */
export function findOverlap(target: string, volumes: Iterable<string>): Overlap | undefined {
  for (const volume of volumes) {
    if (isBelow(target, volume)) return { volume, targetInside: true };
    if (isBelow(volume, target)) return { volume, targetInside: false };
  }
  return undefined;
}

/** The refusal of an overlapping target, naming both paths. */
export function overlapError(target: string, overlap: Overlap): SscError {
  const relation = overlap.targetInside ? 'is inside' : 'contains';
  return new SscError(
    'failed-precondition',
    `target path ${target} ${relation} the volume at ${overlap.volume}: a volume nested in another breaks the outer volume's unpublish and rotation`,
    { reason: 'NestedTargetPath' },
  );
}

/**
 * `path` with symlinks resolved as far as it exists: the realpath of its longest existing
 * prefix plus the rest. So `<volume>/..data/x` becomes `<volume>/..<payload>/x`.
 * Synchronous calls: a first publish's target and a few of its parents are missing, and
 * each realpath(3) of a local path takes microseconds, a trip through libuv's thread pool
 * ~100 µs.
 */
export async function resolveAsFarAsExists(path: string): Promise<string> {
  const rest: string[] = [];
  // stat(2) follows links as realpath does, and says "missing" (ENOENT, ENOTDIR) without
  // the ~10 µs of an exception per level; only the existing prefix is resolved.
  for (let p = path; ; p = dirname(p)) {
    if (p === '/' || statSync(p, { throwIfNoEntry: false }) !== undefined) return join(realpathSync.native(p), ...rest);
    rest.unshift(basename(p));
  }
}

/** True when `dir` holds the atomic writer's `..data` link, i.e. is a written volume (one lstat, synchronous). */
export async function holdsDataLink(dir: string): Promise<boolean> {
  try {
    return lstatSync(join(dir, DATA_DIR_LINK), { throwIfNoEntry: false })?.isSymbolicLink() === true;
  } catch {
    return false;
  }
}

/** Directories a search below a target visits at most (--mount-mode=dir only). */
export const MAX_DIRS_SEARCHED = 10_000;

/**
 * Volumes (directories holding `..data`) below `dir`, for --mount-mode=dir where no
 * mountinfo lists them. Symlinks and payload directories are not followed; the search
 * stops after MAX_DIRS_SEARCHED directories (a target is normally missing or empty).
 */
export async function volumesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  const queue = [dir];
  for (let i = 0; i < queue.length && i < MAX_DIRS_SEARCHED; i++) {
    const current = queue[i] as string;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    if (current !== dir && entries.some((e) => e.name === DATA_DIR_LINK && e.isSymbolicLink())) {
      found.push(current);
      continue;
    }
    for (const e of entries) if (e.isDirectory() && !e.name.startsWith('..')) queue.push(join(current, e.name));
  }
  return found;
}

/** Where a mounter finds the volumes that contain a resolved target or lie below it. */
export interface VolumeFinder {
  volumesNear(resolvedTarget: string): Promise<string[]>;
}

/**
 * Refuses a first publish whose target overlaps a volume: one the mounter finds, or one
 * being published or unpublished right now (`inProgress`, clean paths; the target's own
 * lock is among them). Those are compared as spelled, not resolved: one realpath per
 * publish, not one per operation in flight, so a burst of first mounts stays linear.
 * A symlink spelling of a directory in progress is refused like a second call: ABORTED.
 */
export async function assertNoOverlap(
  target: string,
  finder: VolumeFinder,
  inProgress: readonly string[],
): Promise<void> {
  const resolved = await resolveAsFarAsExists(target);
  const busy = inProgress.filter((p) => p !== target);
  if (resolved !== target && busy.includes(resolved)) {
    throw new SscError('aborted', `an operation for target path ${target} (as ${resolved}) is already in progress`, {
      reason: 'OperationInProgress',
    });
  }
  const overlap =
    findOverlap(target, busy) ?? findOverlap(resolved, [...busy, ...(await finder.volumesNear(resolved))]);
  if (overlap) throw overlapError(target, overlap);
}
