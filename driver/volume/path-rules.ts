import { SscError } from '../../proto/runtime/errors.js';
import { quoted } from '../../proto/runtime/untrusted-text.js';

/** Longest relative path accepted from a provider, in bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Longest single path element, in bytes (Linux NAME_MAX). */
export const MAX_ELEMENT_BYTES = 255;
/** Deepest provider path accepted, in elements: deeper trees only serve to exhaust the writer. */
export const MAX_PATH_DEPTH = 128;
/** Longest path the kernel takes, in bytes, without the terminating NUL (PATH_MAX - 1). */
export const MAX_ON_DISK_PATH_BYTES = 4095;
/** Length of a payload directory's name (`..2026_11_23_20_16_00.` plus 6 random characters). */
export const PAYLOAD_DIR_NAME_BYTES = 28;
/** The directory the driver writes object versions into; providers may not use it. */
export const METADATA_DIR = '.metadata';

/**
 * Why `path` may not be written into a volume, or undefined when it may. Rules (SPEC 5.5):
 * relative, clean, no `..` element, not starting with `..` (the atomic writer's own
 * names), not under `.metadata`, at most 4096 bytes, elements at most 255 bytes, at most
 * 128 elements deep. Linear in the path's length.
 */
export function pathProblem(path: string): string | undefined {
  if (path === '') return 'path is empty';
  if (path.includes('\0')) return 'path contains a NUL byte';
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `path is longer than ${MAX_PATH_BYTES} bytes`;
  if (path.startsWith('/')) return 'path is absolute';
  if (path.startsWith('..')) return 'path starts with ".."';
  const elements = path.split('/');
  if (elements.length > MAX_PATH_DEPTH) return `path is nested deeper than ${MAX_PATH_DEPTH} levels`;
  if (elements.includes('..')) return 'path has a ".." element';
  if (elements.some((e) => e === '' || e === '.')) return 'path is not clean (empty or "." element)';
  if (elements.some((e) => Buffer.byteLength(e) > MAX_ELEMENT_BYTES)) return `a path element is longer than ${MAX_ELEMENT_BYTES} bytes`;
  if (elements[0] === METADATA_DIR) return `path is inside the reserved ${METADATA_DIR} directory`;
  return undefined;
}

/**
 * Why `path` cannot be written under `targetPath`, or undefined: the payload directory's
 * copy (`<target>/<payload dir>/<path>`) must stay within PATH_MAX, or the write fails
 * half-way with ENAMETOOLONG.
 */
export function onDiskProblem(targetPath: string, path: string): string | undefined {
  const bytes = Buffer.byteLength(targetPath) + 1 + PAYLOAD_DIR_NAME_BYTES + 1 + Buffer.byteLength(path);
  if (bytes > MAX_ON_DISK_PATH_BYTES) return `path would be ${bytes} bytes long on disk (target path, payload directory and path), more than ${MAX_ON_DISK_PATH_BYTES}`;
  return undefined;
}

/**
 * A provider-supplied path for error messages: quoted, its first 64 characters at most
 * (enough to find it; a rejected path may be megabytes or carry more than a name), with
 * control and invisible characters escaped.
 */
export function quotePath(path: string): string {
  return quoted(path, 64);
}

function rejected(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidProviderResponse' });
}

/** A directory in the tree of paths seen so far; FILE marks a path that is a file. */
type Tree = Map<string, Tree | typeof FILE>;
const FILE = 0;

/**
 * Checks provider paths one at a time as a set: each must pass pathProblem (and
 * onDiskProblem under `targetPath`), none may repeat, and none may be both a file and a
 * directory (`a` and `a/b`). `add` throws invalid-argument naming the bad path and the
 * rule, so the whole response is rejected before anything is written. Linear in the total
 * length of the paths: each path walks a tree of the elements seen so far. One path per
 * call lets a caller pace a response of hundreds of thousands of paths.
 */
export class PathSetChecker {
  private readonly root: Tree = new Map();

  constructor(private readonly targetPath?: string) {}

  add(path: string): void {
    const problem = pathProblem(path) ?? (this.targetPath === undefined ? undefined : onDiskProblem(this.targetPath, path));
    if (problem) throw rejected(`provider returned an invalid file path ${quotePath(path)}: ${problem}`);
    const elements = path.split('/');
    let dir = this.root;
    for (let i = 0; i < elements.length - 1; i++) {
      const name = elements[i] as string;
      const next = dir.get(name);
      if (next === FILE) throw rejected(`provider returned ${quotePath(elements.slice(0, i + 1).join('/'))} both as a file and as a directory`);
      if (next === undefined) { const created: Tree = new Map(); dir.set(name, created); dir = created; } else dir = next;
    }
    const last = elements[elements.length - 1] as string;
    const existing = dir.get(last);
    if (existing === FILE) throw rejected(`provider returned the file path ${quotePath(path)} more than once`);
    if (existing !== undefined) throw rejected(`provider returned ${quotePath(path)} both as a file and as a directory`);
    dir.set(last, FILE);
  }
}
