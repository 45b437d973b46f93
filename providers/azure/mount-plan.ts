// Which object versions a Mount writes, decided before any value is read. A class entry
// becomes one planned file (or N with objectVersionHistory), each with its object id
// (Azure's provider's `<type>/<name>[/<i>]`) and the Key Vault version to read ('' = the
// latest, resolved by the read itself). On a first Mount nothing is listed: a single
// object's latest version comes with its value. On a rotation (the driver sent the
// mounted versions) each unpinned object's versions are listed first (properties, no
// value), so that when nothing changed the Mount is answered without reading a value.
import { quoted } from '../../lib/untrusted-text.js';
import { mountedAsIs } from '../framework/object-versions.js';
import { hasVersionHistory, historyFileName, historyObjectId, objectId, type KeyVaultObject } from './objects.js';
import { describeObject } from './render.js';
import { latestVersion, selectVersionHistory, type VersionProperties } from './version-history.js';
import { invalidParameter } from './azure-errors.js';

/** One file-producing read of a Mount. */
export interface PlannedEntry {
  readonly object: KeyVaultObject;
  /** The object id reported to the driver (and the pod status). */
  readonly id: string;
  /** The file the value is written to (before render suffixes). */
  readonly fileName: string;
  /** The Key Vault version to read; '' reads the latest. */
  readonly version: string;
}

/** How planEntries lists an object's versions (shared and counted by the caller). */
export interface VersionLister {
  /** Every version, for objectVersionHistory; errors fail the Mount. */
  all(object: KeyVaultObject): Promise<VersionProperties[]>;
  /**
   * Versions to find the latest for a rotation; undefined when they are not worth or
   * not allowed to list (too many pages, no `list` permission): the value is read then.
   */
  forLatest(object: KeyVaultObject): Promise<VersionProperties[] | undefined>;
}

/**
 * The entries of one class object. Versions are listed only for objectVersionHistory > 1
 * and for an unpinned single object on a rotation.
 */
export async function planEntries(
  object: KeyVaultObject,
  current: ReadonlyMap<string, string>,
  lister: VersionLister,
): Promise<PlannedEntry[]> {
  if (hasVersionHistory(object)) {
    const chosen = selectVersionHistory(
      await lister.all(object),
      object.objectVersion,
      object.objectVersionHistory,
      describeObject(object),
    );
    return chosen.map(({ version, index }) => ({
      object,
      id: historyObjectId(object, index),
      fileName: historyFileName(object, index),
      version,
    }));
  }
  const single = { object, id: objectId(object), fileName: object.fileName };
  if (object.objectVersion !== undefined) return [{ ...single, version: object.objectVersion }];
  if (current.size === 0) return [{ ...single, version: '' }];
  const versions = await lister.forLatest(object);
  if (versions === undefined) return [{ ...single, version: '' }];
  const latest = latestVersion(versions);
  // A disabled newest version is read, so that Key Vault's refusal (SecretDisabled) is
  // reported as a read would report it, instead of the mounted content passing as current.
  const disabled = versions.some((v) => v.version === latest.version && v.enabled === false);
  return [{ ...single, version: latest.version !== undefined && !latest.ambiguous && !disabled ? latest.version : '' }];
}

/**
 * One version per object id. A class may list one Key Vault object twice (a certificate
 * as PEM and as PFX under two aliases): upstream then reports its id twice and the Go
 * driver keeps one; the driver here refuses duplicate ids, so they are merged. Listed
 * twice with different versions (one pinned), the ids would name two versions at once:
 * INVALID_ARGUMENT naming the object.
 */
export function uniqueVersions(
  entries: readonly { readonly id: string; readonly version: string }[],
): { id: string; version: string }[] {
  const byId = new Map<string, string>();
  for (const { id, version } of entries) {
    const seen = byId.get(id);
    if (seen !== undefined && seen !== version) {
      throw invalidParameter(
        `${quoted(id, 140)} is listed twice with different versions (${quoted(seen, 64)} and ` +
          `${quoted(version, 64)}); give each version its own objectVersionHistory entry or one ` +
          `objectVersion`,
      );
    }
    byId.set(id, version);
  }
  return [...byId].map(([id, version]) => ({ id, version }));
}

/**
 * True when every planned version is known and the set of (id, version) is exactly
 * what the driver has mounted: the Mount can be answered without files (the driver
 * keeps the mounted ones).
 */
export function unchangedFromProperties(
  planned: readonly PlannedEntry[],
  current: ReadonlyMap<string, string>,
): boolean {
  if (current.size === 0 || planned.some((e) => e.version === '')) return false;
  const versions = uniqueVersions(planned);
  return mountedAsIs(
    versions.map((v) => v.id),
    versions.map((v) => v.version),
    current,
  );
}
