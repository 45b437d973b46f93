// Which versions of a Key Vault object a Mount writes, from the versions' properties
// (list versions: id, createdOn, enabled), as Azure's provider v1.8.2 picks them
// (provider.go getLatestNKeyVaultObjects, keyvault.go Get…Versions): disabled versions
// skipped, newest created first, starting at the pinned objectVersion (or the newest
// for none or "latest"), file index 0, 1, … Two differences, on purpose:
// - exactly objectVersionHistory versions: upstream appends one more before it checks
//   the count (`if length+1 > N { break }` after the append), so N=2 writes /0, /1, /2;
//   the docs promise N, and N it is here (docs/providers/azure.md says so);
// - a pinned version that is not an enabled version is NOT_FOUND (upstream writes no
//   file for the object and answers success).
// Versions created in the same second (Key Vault's createdOn resolution) sort by
// version id, so the files do not flap with the order of the list; Go's sort.Sort
// leaves such ties in no particular order.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';

/** A version's properties as the list-versions calls return them. */
export interface VersionProperties {
  readonly version: string;
  /** undefined sorts last (Go's zero time.Time). */
  readonly createdOn: Date | undefined;
  /** undefined counts as enabled (upstream skips only an explicit false). */
  readonly enabled: boolean | undefined;
}

/** One version to write: its id and its index in `<fileName>/<index>`. */
export interface HistoryVersion {
  readonly version: string;
  readonly index: number;
}

/** The latest version of an object, and whether another version shares its creation second. */
export interface LatestVersion {
  readonly version: string | undefined;
  /** True when the newest second holds two versions: which one Key Vault serves is unknown. */
  readonly ambiguous: boolean;
}

function createdSecond(v: VersionProperties): number {
  return v.createdOn === undefined ? -Infinity : Math.floor(v.createdOn.getTime() / 1000);
}

/** Newest first; the same second ordered by version id (byte order). */
function newestFirst(a: VersionProperties, b: VersionProperties): number {
  const byTime = createdSecond(b) - createdSecond(a);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
}

/**
 * The version Key Vault serves without a version (the newest created, enabled or not:
 * a disabled newest version is an error to read, not skipped). `ambiguous` when the
 * newest creation second holds more than one version; undefined for no versions.
 */
export function latestVersion(versions: readonly VersionProperties[]): LatestVersion {
  if (versions.length === 0) return { version: undefined, ambiguous: false };
  const newest = Math.max(...versions.map(createdSecond));
  const candidates = versions.filter((v) => createdSecond(v) === newest).sort(newestFirst);
  return { version: candidates[0]?.version, ambiguous: candidates.length > 1 };
}

/**
 * The `count` newest enabled versions starting at `pinned` (undefined: the newest),
 * indexed from 0. Fewer when the object has fewer (as upstream). Throws NOT_FOUND
 * (`ObjectVersionNotFound`) naming `what` when `pinned` is not an enabled version.
 */
export function selectVersionHistory(
  versions: readonly VersionProperties[],
  pinned: string | undefined,
  count: number,
  what: string,
): HistoryVersion[] {
  const enabled = versions.filter((v) => v.enabled !== false).sort(newestFirst);
  const start = pinned === undefined ? 0 : enabled.findIndex((v) => v.version === pinned);
  if (start < 0) {
    throw new SscError(
      'not-found',
      `azure provider: ${what}: objectVersion ${quoted(pinned ?? '', 64)} is not an enabled version, so its history cannot start there`,
      { reason: 'ObjectVersionNotFound' },
    );
  }
  return enabled.slice(start, start + Math.max(count, 0)).map((v, index) => ({ version: v.version, index }));
}
