import {
  chmodSync,
  chownSync,
  closeSync,
  fchmodSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Pacer } from '../../lib/pacer.js';
import { dirEntries } from './dir-entries.js';
import { dirModeFor, fileModeFor } from './ownership.js';
import type { Payload } from './payload.js';
import { sha256, type FileState } from './write-plan.js';

// The files of one payload directory, for the atomic writer: what is on disk, what a
// payload will put there, and writing it (with the mount group's ownership when set).

/** Reads mode, group and digest of every file under `dir`, skipping paths in `skip`; no recursion. */
export async function readState(dir: string, skip: ReadonlySet<string>, pacer: Pacer): Promise<Map<string, FileState>> {
  const state = new Map<string, FileState>();
  const pending = [''];
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    for await (const entry of dirEntries(join(dir, rel), pacer)) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(path);
      else if (!skip.has(path)) {
        const full = join(dir, path);
        const s = lstatSync(full);
        state.set(path, { mode: s.mode & 0o7777, gid: s.gid, sha256: sha256(readFileSync(full)) });
      }
    }
  }
  return state;
}

/**
 * Mode, group and digest every file of a payload gets on disk (what the writer remembers
 * instead of bytes): with a mount group, its group and the group rule's mode.
 */
export async function stateOf(
  payload: Payload,
  gid: number | undefined,
  pacer: Pacer,
): Promise<Map<string, FileState>> {
  const state = new Map<string, FileState>();
  for (const [path, f] of payload) {
    state.set(path, {
      mode: fileModeFor(f.mode, gid),
      sha256: sha256(f.contents),
      ...(gid === undefined ? {} : { gid }),
    });
    if (pacer.due()) await pacer.pause();
  }
  return state;
}

/** chmod `path` to `mode` unless creating it with `mode` under `umask` already gave exactly that. */
function ensureMode(path: string, mode: number, umask: number): void {
  if ((mode & ~umask) !== mode) chmodSync(path, mode);
}

/** Sets a new directory's group and mode: mkdir(2) ignores setgid in its mode argument. */
export function setDirGroup(path: string, gid: number, mode: number): void {
  chownSync(path, -1, gid);
  chmodSync(path, mode);
}

/**
 * Writes one file with `mode`, not narrowed by the process umask (the provider's mode is
 * what it asked for), and with a mount group its group, set on the open file before a
 * byte is written.
 */
function writeFile(path: string, contents: Buffer, mode: number, umask: number, gid: number | undefined): void {
  const fd = openSync(path, 'wx', mode);
  try {
    if (gid !== undefined) fchownSync(fd, -1, gid);
    writeFileSync(fd, contents);
    if ((mode & ~umask) !== mode) fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `payloads` into the new payload directory `dir`: parent directories first (0755,
 * or for mount group `gid` 02755 and that group), then each file with its mode.
 */
export async function writeFiles(
  dir: string,
  payloads: readonly Payload[],
  gid: number | undefined,
  pacer: Pacer,
): Promise<void> {
  // Read per write: chmod is only needed where the umask would narrow a requested mode.
  const umask = process.umask();
  // Each path's parents in order of length, so a directory always comes before its
  // children without sorting (sorting 120,000 long, shared-prefix names took ~100 ms).
  const dirs = new Set<string>();
  for (const files of payloads) {
    for (const path of files.keys()) {
      for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1))
        dirs.add(path.slice(0, slash));
      if (pacer.due()) await pacer.pause();
    }
  }
  // Not narrowed by the umask: non-root pods must traverse it.
  const dirMode = dirModeFor(0o755, gid);
  for (const d of dirs) {
    const path = join(dir, d);
    mkdirSync(path, { mode: dirMode });
    if (gid === undefined) ensureMode(path, dirMode, umask);
    else setDirGroup(path, gid, dirMode);
    if (pacer.due()) await pacer.pause();
  }
  for (const files of payloads) {
    for (const [path, file] of files) {
      writeFile(join(dir, path), file.contents, fileModeFor(file.mode, gid), umask, gid);
      if (pacer.due()) await pacer.pause();
    }
  }
}
