// The rules every File.path of a Mount response must pass. The driver
// enforces them on every response (driver/volume/path-rules.ts); providers check their
// object names with the same function while parsing parameters, so a bad name fails
// early with the parameter named instead of after the secrets were fetched.

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
 * Why `path` may not be written into a volume, or undefined when it may. Rules:
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
  if (elements.some((e) => Buffer.byteLength(e) > MAX_ELEMENT_BYTES))
    return `a path element is longer than ${MAX_ELEMENT_BYTES} bytes`;
  if (elements[0] === METADATA_DIR) return `path is inside the reserved ${METADATA_DIR} directory`;
  return undefined;
}
