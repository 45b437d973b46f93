import { SscError } from '../../proto/runtime/errors.js';
import { quoted } from '../../proto/runtime/untrusted-text.js';

/** Longest relative path accepted from a provider, in bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Longest single path element, in bytes (Linux NAME_MAX). */
export const MAX_ELEMENT_BYTES = 255;
/** The directory the driver writes object versions into; providers may not use it. */
export const METADATA_DIR = '.metadata';

/**
 * Why `path` may not be written into a volume, or undefined when it may. Rules (SPEC 5.5):
 * relative, clean, no `..` element, not starting with `..` (the atomic writer's own
 * names), not under `.metadata`, at most 4096 bytes, elements at most 255 bytes.
 */
export function pathProblem(path: string): string | undefined {
  if (path === '') return 'path is empty';
  if (path.includes('\0')) return 'path contains a NUL byte';
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `path is longer than ${MAX_PATH_BYTES} bytes`;
  if (path.startsWith('/')) return 'path is absolute';
  if (path.startsWith('..')) return 'path starts with ".."';
  const elements = path.split('/');
  if (elements.includes('..')) return 'path has a ".." element';
  if (elements.some((e) => e === '' || e === '.')) return 'path is not clean (empty or "." element)';
  if (elements.some((e) => Buffer.byteLength(e) > MAX_ELEMENT_BYTES)) return `a path element is longer than ${MAX_ELEMENT_BYTES} bytes`;
  if (elements[0] === METADATA_DIR) return `path is inside the reserved ${METADATA_DIR} directory`;
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

/**
 * Checks a whole set of provider paths: each must pass pathProblem, none may repeat,
 * and none may be both a file and a directory (`a` and `a/b`). Throws invalid-argument
 * naming the first bad path, so the whole response is rejected.
 */
export function assertValidPaths(paths: readonly string[]): void {
  const seen = new Set<string>();
  for (const path of paths) {
    const problem = pathProblem(path);
    if (problem) throw new SscError('failed-precondition', `provider returned an invalid file path ${quotePath(path)}: ${problem}`, { reason: 'InvalidProviderResponse' });
    if (seen.has(path)) throw new SscError('failed-precondition', `provider returned the file path ${quotePath(path)} more than once`, { reason: 'InvalidProviderResponse' });
    seen.add(path);
  }
  for (const path of paths) {
    const elements = path.split('/');
    for (let i = 1; i < elements.length; i++) {
      const parent = elements.slice(0, i).join('/');
      if (seen.has(parent)) {
        throw new SscError('failed-precondition', `provider returned ${quotePath(parent)} both as a file and as a directory`, { reason: 'InvalidProviderResponse' });
      }
    }
  }
}
