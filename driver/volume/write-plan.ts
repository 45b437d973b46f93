import { createHash } from 'node:crypto';
import type { Pacer } from '../../lib/pacer.js';

/** What is on disk for one file: its mode, group and the SHA-256 of its bytes (never the bytes). */
export interface FileState {
  readonly mode: number;
  readonly sha256: string;
  /**
   * The file's group. In a desired state: the mount group, or undefined when the request
   * named none (then the group is not compared, as before volume_mount_group existed).
   */
  readonly gid?: number;
}

/** The decision of the atomic writer, made without touching the disk. */
export interface WritePlan {
  /** False when every file, byte, mode and (with a mount group) group already matches: nothing is written. */
  readonly changed: boolean;
  /** Top-level names that need a new `name -> ..data/name` link. */
  readonly linksToAdd: readonly string[];
  /** Top-level links that no longer have a file behind them. */
  readonly linksToRemove: readonly string[];
  /** Every top-level name of the desired payload (what the links will be after the write). */
  readonly wantedLinks: readonly string[];
}

/** SHA-256 of a file's bytes, hex. */
export function sha256(contents: Buffer): string {
  return createHash('sha256').update(contents).digest('hex');
}

/** The first element of a path: the top-level name its link has. */
export function topLevelName(path: string): string {
  const slash = path.indexOf('/');
  return slash < 0 ? path : path.slice(0, slash);
}

/**
 * Compares what is on disk with what should be there, in time linear in the number of
 * files (a volume may hold hundreds of thousands; with a pacer the event loop gets a turn
 * every few milliseconds). `current` is undefined when the target has never been written.
 * Only compared paths count: volatile files (such as `.metadata/versions.json` with its
 * write time) are left out by the caller. A file's group counts only where `desired`
 * names one (a mount group). Links come in the order of `desired` and `currentLinks`.
 */
export async function planWrite(
  current: ReadonlyMap<string, FileState> | undefined,
  desired: ReadonlyMap<string, FileState>,
  currentLinks: readonly string[],
  pacer?: Pacer,
): Promise<WritePlan> {
  const present = new Set<string>();
  for (const name of currentLinks) {
    present.add(name);
    if (pacer?.due()) await pacer.pause();
  }
  const wanted = new Set<string>();
  const linksToAdd: string[] = [];
  for (const path of desired.keys()) {
    const name = topLevelName(path);
    if (!wanted.has(name)) {
      wanted.add(name);
      if (!present.has(name)) linksToAdd.push(name);
    }
    if (pacer?.due()) await pacer.pause();
  }
  const linksToRemove: string[] = [];
  for (const name of currentLinks) {
    if (!wanted.has(name)) linksToRemove.push(name);
    if (pacer?.due()) await pacer.pause();
  }
  let changed =
    current === undefined || current.size !== desired.size || linksToAdd.length > 0 || linksToRemove.length > 0;
  if (!changed && current) {
    for (const [path, file] of desired) {
      const now = current.get(path);
      if (
        !now ||
        now.mode !== file.mode ||
        now.sha256 !== file.sha256 ||
        (file.gid !== undefined && now.gid !== file.gid)
      ) {
        changed = true;
        break;
      }
      if (pacer?.due()) await pacer.pause();
    }
  }
  return { changed, linksToAdd, linksToRemove, wantedLinks: [...wanted] };
}
