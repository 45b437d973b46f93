// The path rules are the provider API's contract on File.path: shared with the providers
// (lib/provider-file-path.ts), so a provider can refuse a bad objectName while
// parsing its parameters, before it fetches anything.
import { SscError } from '../../lib/errors.js';
import { MAX_ON_DISK_PATH_BYTES, PAYLOAD_DIR_NAME_BYTES, pathProblem } from '../../lib/provider-file-path.js';
import { quoted } from '../../lib/untrusted-text.js';

export {
  MAX_ELEMENT_BYTES,
  MAX_ON_DISK_PATH_BYTES,
  MAX_PATH_BYTES,
  MAX_PATH_DEPTH,
  METADATA_DIR,
  PAYLOAD_DIR_NAME_BYTES,
  pathProblem,
} from '../../lib/provider-file-path.js';

/**
 * Why `path` cannot be written under `targetPath`, or undefined: the payload directory's
 * copy (`<target>/<payload dir>/<path>`) must stay within PATH_MAX, or the write fails
 * half-way with ENAMETOOLONG.
 */
export function onDiskProblem(targetPath: string, path: string): string | undefined {
  const bytes = Buffer.byteLength(targetPath) + 1 + PAYLOAD_DIR_NAME_BYTES + 1 + Buffer.byteLength(path);
  if (bytes > MAX_ON_DISK_PATH_BYTES)
    return `path would be ${bytes} bytes long on disk (target path, payload directory and path), more than ${MAX_ON_DISK_PATH_BYTES}`;
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
    const problem =
      pathProblem(path) ?? (this.targetPath === undefined ? undefined : onDiskProblem(this.targetPath, path));
    if (problem) throw rejected(`provider returned an invalid file path ${quotePath(path)}: ${problem}`);
    const elements = path.split('/');
    let dir = this.root;
    for (let i = 0; i < elements.length - 1; i++) {
      const name = elements[i] as string;
      const next = dir.get(name);
      if (next === FILE)
        throw rejected(
          `provider returned ${quotePath(elements.slice(0, i + 1).join('/'))} both as a file and as a directory`,
        );
      if (next === undefined) {
        const created: Tree = new Map();
        dir.set(name, created);
        dir = created;
      } else dir = next;
    }
    const last = elements[elements.length - 1] as string;
    const existing = dir.get(last);
    if (existing === FILE) throw rejected(`provider returned the file path ${quotePath(path)} more than once`);
    if (existing !== undefined)
      throw rejected(`provider returned ${quotePath(path)} both as a file and as a directory`);
    dir.set(last, FILE);
  }
}
