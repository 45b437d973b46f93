// The versions a Mount answers, against those the driver says it has mounted
// (current_object_version): whether the Mount may answer "unchanged", with no files, so
// that the driver keeps the mounted ones; and which objects changed, for the log.
import type { Logger } from '../../lib/logging/logger.js';

/**
 * True when the driver has mounted exactly the objects `ids` (no id twice), each at the
 * version at the same index of `versions`: the Mount may answer with no files. A version
 * not known (undefined), or nothing mounted, is never unchanged.
 */
export function mountedAsIs(
  ids: readonly string[],
  versions: readonly (string | undefined)[],
  mounted: ReadonlyMap<string, string>,
): boolean {
  if (ids.length === 0 || ids.length !== mounted.size) return false;
  return ids.every((id, i) => versions[i] !== undefined && mounted.get(id) === versions[i]);
}

/** Logs "object changed" for each object whose version differs from the one mounted (ids only, never contents). */
export function logChangedObjects(
  logger: Logger,
  mounted: ReadonlyMap<string, string>,
  versions: readonly { readonly id: string; readonly version: string }[],
  idField: 'objectName' | 'objectId' = 'objectName',
): void {
  for (const v of versions) {
    const previous = mounted.get(v.id);
    if (previous !== undefined && previous !== v.version) logger.info('object changed', { [idField]: v.id });
  }
}
