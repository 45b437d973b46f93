import { createHash } from 'node:crypto';

/** What is on disk for one file: its mode and the SHA-256 of its bytes (never the bytes). */
export interface FileState {
  readonly mode: number;
  readonly sha256: string;
}

/** The decision of the atomic writer, made without touching the disk. */
export interface WritePlan {
  /** False when every file, byte and mode already matches: nothing is written. */
  readonly changed: boolean;
  /** Top-level names that need a new `name -> ..data/name` link. */
  readonly linksToAdd: readonly string[];
  /** Top-level links that no longer have a file behind them. */
  readonly linksToRemove: readonly string[];
}

/** SHA-256 of a file's bytes, hex. */
export function sha256(contents: Buffer): string {
  return createHash('sha256').update(contents).digest('hex');
}

/** The first element of each path, deduplicated, sorted. */
export function topLevelNames(paths: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const p of paths) {
    const slash = p.indexOf('/');
    names.add(slash < 0 ? p : p.slice(0, slash));
  }
  return [...names].sort();
}

/**
 * Compares what is on disk with what should be there, in time linear in the number of
 * files (a volume may hold hundreds of thousands). `current` is undefined when the target
 * has never been written. Only compared paths count: volatile files (such as
 * `.metadata/versions.json` with its write time) are left out by the caller.
 */
export function planWrite(current: ReadonlyMap<string, FileState> | undefined, desired: ReadonlyMap<string, FileState>, currentLinks: readonly string[]): WritePlan {
  const wantedLinks = topLevelNames(desired.keys());
  const wanted = new Set(wantedLinks);
  const present = new Set(currentLinks);
  const linksToAdd = wantedLinks.filter((n) => !present.has(n));
  const linksToRemove = currentLinks.filter((n) => !wanted.has(n));
  let changed = current === undefined || current.size !== desired.size || linksToAdd.length > 0 || linksToRemove.length > 0;
  if (!changed && current) {
    for (const [path, file] of desired) {
      const now = current.get(path);
      if (!now || now.mode !== file.mode || now.sha256 !== file.sha256) { changed = true; break; }
    }
  }
  return { changed, linksToAdd, linksToRemove };
}
