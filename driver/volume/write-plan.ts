import { createHash } from 'node:crypto';
import type { Payload } from './payload.js';

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
  return [...new Set([...paths].map((p) => p.split('/')[0] as string))].sort();
}

/**
 * Compares what is on disk with what should be there. `current` is undefined when the
 * target has never been written. Only compared paths count: volatile files (such as
 * `.metadata/versions.json` with its write time) are left out by the caller.
 */
export function planWrite(current: ReadonlyMap<string, FileState> | undefined, desired: Payload, currentLinks: readonly string[]): WritePlan {
  const wantedLinks = topLevelNames(desired.keys());
  const linksToAdd = wantedLinks.filter((n) => !currentLinks.includes(n));
  const linksToRemove = currentLinks.filter((n) => !wantedLinks.includes(n));
  let changed = current === undefined || current.size !== desired.size || linksToAdd.length > 0 || linksToRemove.length > 0;
  if (!changed && current) {
    for (const [path, file] of desired) {
      const now = current.get(path);
      if (!now || now.mode !== file.mode || now.sha256 !== sha256(file.contents)) { changed = true; break; }
    }
  }
  return { changed, linksToAdd, linksToRemove };
}
