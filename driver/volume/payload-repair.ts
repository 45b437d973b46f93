import { lstatSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { SscError } from '../../lib/errors.js';
import type { Pacer } from '../../lib/pacer.js';
import { dirEntries } from './dir-entries.js';
import { removeTree } from './remove-tree.js';

/** The symlink that points at the current payload directory (as kubelet names it). */
export const DATA_DIR_LINK = '..data';
/** The link made next to `..data` and renamed over it: the swap. */
export const DATA_DIR_TMP_LINK = '..data_tmp';

/** A payload directory's name: `..2026_11_22_00_12_09.` and a random suffix. */
const PAYLOAD_DIR_NAME = /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\./;

/** True for the name of a payload directory (the writer's hidden timestamped directories). */
export function isPayloadDirName(name: string): boolean {
  return PAYLOAD_DIR_NAME.test(name);
}

/**
 * Where `..data` points (a payload directory's name), or undefined when there is no
 * `..data`. An lstat first: a new volume has none, and readlink's ENOENT as an exception
 * costs ~10 µs, more than the extra syscall for a volume that has one.
 */
export function readDataLink(targetDir: string): string | undefined {
  const link = join(targetDir, DATA_DIR_LINK);
  const s = lstatSync(link, { throwIfNoEntry: false });
  if (s === undefined) return undefined;
  if (!s.isSymbolicLink()) throw new SscError('failed-precondition', `${link} is not a symlink`);
  try {
    return readlinkSync(link);
  } catch (err) {
    // Removed or replaced since the lstat: answer as if read a moment later.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((err as NodeJS.ErrnoException).code === 'EINVAL')
      throw new SscError('failed-precondition', `${link} is not a symlink`);
    throw err;
  }
}

/** What repairTarget found and mended. */
export interface RepairResult {
  /** The payload directory `..data` points at (undefined: nothing was ever swapped in). */
  readonly dataDir: string | undefined;
  /** The top-level `name -> ..data/name` links present after the repair, sorted. */
  readonly links: readonly string[];
  /** Leftover payload directories and `..data_tmp` that were removed. */
  readonly removedDirs: readonly string[];
  /** Links into `..data` that led nowhere and were removed. */
  readonly removedLinks: readonly string[];
  /** Top-level names of the current payload that had no link and got one. */
  readonly addedLinks: readonly string[];
}

/** True when anything was mended. */
export function repaired(result: RepairResult): boolean {
  return result.removedDirs.length + result.removedLinks.length + result.addedLinks.length > 0;
}

/** The sizes of a repair, for a log line (a volume may have thousands of names). */
export function repairCounts(result: RepairResult): { removedDirs: number; removedLinks: number; addedLinks: number } {
  return {
    removedDirs: result.removedDirs.length,
    removedLinks: result.removedLinks.length,
    addedLinks: result.addedLinks.length,
  };
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Brings a target directory back to the writer's invariant after a crash or a failed
 * cleanup: `..data` names one payload directory, no other payload directory or
 * `..data_tmp` is left, every top-level link `name -> ..data/name` leads to a file or
 * directory of that payload, and every top-level name of the payload has its link.
 * A write interrupted at any step leaves either the old or the new payload complete
 * behind `..data` (the swap is one rename), so this never has to choose between them.
 * Entries the driver did not make (plain files, links elsewhere) are left alone.
 */
export async function repairTarget(targetDir: string, pacer?: Pacer): Promise<RepairResult> {
  let dataDir = readDataLink(targetDir);
  if (dataDir !== undefined && !isPayloadDirName(dataDir)) {
    // Only the writer makes `..data`, always naming a sibling payload directory.
    throw new SscError(
      'failed-precondition',
      `${join(targetDir, DATA_DIR_LINK)} points at ${JSON.stringify(dataDir.slice(0, 64))}, not at a payload directory; refusing to touch the volume`,
    );
  }
  if (dataDir !== undefined && lstatSync(join(targetDir, dataDir), { throwIfNoEntry: false })?.isDirectory() !== true) {
    // `..data` leads nowhere: only tampering does that (the writer removes a payload
    // directory only after `..data` left it). The volume is empty; the next write refills it.
    unlinkSync(join(targetDir, DATA_DIR_LINK));
    dataDir = undefined;
  }
  const removedDirs: string[] = [];
  const removedLinks: string[] = [];
  const links: string[] = [];
  for await (const entry of dirEntries(targetDir, pacer)) {
    const name = entry.name;
    if (name === DATA_DIR_TMP_LINK || (entry.isDirectory() && isPayloadDirName(name) && name !== dataDir)) {
      await removeTree(join(targetDir, name), pacer);
      removedDirs.push(name);
    } else if (
      !name.startsWith('..') &&
      entry.isSymbolicLink() &&
      linkTarget(join(targetDir, name)) === `${DATA_DIR_LINK}/${name}`
    ) {
      const resolves =
        dataDir !== undefined && lstatSync(join(targetDir, dataDir, name), { throwIfNoEntry: false }) !== undefined;
      if (resolves) links.push(name);
      else {
        unlinkSync(join(targetDir, name));
        removedLinks.push(name);
      }
    }
  }
  const addedLinks: string[] = [];
  if (dataDir !== undefined) {
    const present = new Set(links);
    for await (const { name } of dirEntries(join(targetDir, dataDir), pacer)) {
      if (present.has(name) || lstatSync(join(targetDir, name), { throwIfNoEntry: false }) !== undefined) continue;
      symlinkSync(`${DATA_DIR_LINK}/${name}`, join(targetDir, name));
      addedLinks.push(name);
      links.push(name);
    }
  }
  return {
    dataDir,
    links: links.sort(),
    removedDirs: removedDirs.sort(),
    removedLinks: removedLinks.sort(),
    addedLinks: addedLinks.sort(),
  };
}
