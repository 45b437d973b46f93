// The Key Vault reads of one Mount, for one identity and vault: each goes through the
// shared read window (reads of one identity reused by other Mounts), the throttling
// retry bounded by the Mount's deadline, and the error mapping. Listing versions to find
// the latest (a rotation's properties-only check) is an optimisation, never a new way to
// fail: when listing would take more than a few pages, or the identity may not list
// (Azure's docs grant `get` only), the value is read instead, as Azure's provider does;
// a refused listing is remembered for an hour so it is not asked again each round.
import { LRUCache } from 'lru-cache';
import { entryBound, ttlClock, ttlOf } from '../framework/lru-options.js';
import type { ReadCache } from '../framework/read-cache.js';
import type { Logger } from '../../lib/logging/logger.js';
import { keyVaultError, type IdentityKind, type ReadContext } from './azure-errors.js';
import type { KeyVaultReader } from './keyvault-reader.js';
import type { PlannedEntry, VersionLister } from './mount-plan.js';
import type { FetchedObject } from './object-files.js';
import type { KeyVaultObject } from './objects.js';
import { withThrottleRetry, type RetryClock } from './throttle-retry.js';
import type { VersionProperties } from './version-history.js';

/** Pages of versions (25 each) listed to find the latest before reading the value instead. */
export const MAX_LATEST_PAGES = 4;
/** How long a refused listing (no `list` permission) is not asked again. */
export const LIST_REFUSAL_MS = 60 * 60 * 1000;

/** What the read window holds: a value read, a listing, or "too many pages to list". */
export type Read = FetchedObject | VersionProperties[] | 'too-many-pages';

/** Where refused listings are remembered: at most `entries`, each for LIST_REFUSAL_MS on `clock`. */
export function listRefusalMemory(clock: RetryClock, entries: number): LRUCache<string, true> {
  const ttl = ttlOf(LIST_REFUSAL_MS);
  return new LRUCache<string, true>({ ...entryBound(entries), ttl, ...ttlClock(() => clock.now()) });
}

/** Process-wide state the Mounts' reads share. */
export interface SharedReads {
  readonly cache: ReadCache<Read>;
  readonly clock: RetryClock;
  /** Identity+object keys whose listing Key Vault refused (listRefusalMemory). */
  readonly listRefusals: LRUCache<string, true>;
}

/** The reads of one Mount. */
export class MountReads {
  constructor(
    private readonly shared: SharedReads,
    private readonly reader: KeyVaultReader,
    /** Tells identities (and vaults) apart in the shared window; never names them. */
    private readonly identityKey: string,
    private readonly where: { readonly keyvaultName: string; readonly identityKind: IdentityKind },
    private readonly deadlineMs: number | undefined,
    private readonly logger: Logger,
  ) {}

  private context(object: KeyVaultObject, version: string): ReadContext {
    return {
      objectType: object.objectType,
      objectName: object.objectName,
      objectVersion: version,
      keyvaultName: this.where.keyvaultName,
      identityKind: this.where.identityKind,
    };
  }

  private read<T extends Read>(
    requestKey: string,
    context: ReadContext,
    load: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const what = `${context.objectType} ${JSON.stringify(context.objectName).slice(0, 130)}`;
    return (
      this.shared.cache.read(
        this.identityKey,
        requestKey,
        (flight) => withThrottleRetry(() => load(flight), what, this.deadlineMs, flight, this.shared.clock),
        signal,
      ) as Promise<T>
    ).catch((err: unknown) => {
      const mapped = keyVaultError(err, context);
      // Only the error's name and code: its message may carry what the service said.
      if (mapped.reason === 'KeyVaultError')
        this.logger.debug('azure provider: unexpected SDK error', {
          name: String((err as { name?: unknown }).name),
          code: String((err as { code?: unknown }).code),
        });
      throw mapped;
    });
  }

  /** The value of `entry` (its version, or the latest). */
  get(entry: PlannedEntry, signal: AbortSignal): Promise<FetchedObject> {
    const { objectType, objectName } = entry.object;
    return this.read(
      `get|${objectType}|${objectName}|${entry.version}`,
      this.context(entry.object, entry.version),
      async (s) => {
        if (objectType === 'secret')
          return { kind: 'secret', ...(await this.reader.getSecret(objectName, entry.version, s)) };
        if (objectType === 'key') return { kind: 'key', ...(await this.reader.getKey(objectName, entry.version, s)) };
        return { kind: 'cert', ...(await this.reader.getCertificate(objectName, entry.version, s)) };
      },
      signal,
    );
  }

  /** The lister planEntries uses, with this Mount's signal. */
  lister(signal: AbortSignal): VersionLister {
    return {
      all: async (object) => {
        const all = await this.read(
          `list|${object.objectType}|${object.objectName}|all`,
          this.context(object, ''),
          async (s) => (await this.reader.listVersions(object.objectType, object.objectName, s)) ?? [],
          signal,
        );
        return all as VersionProperties[];
      },
      forLatest: async (object) => {
        const refusalKey = JSON.stringify([this.identityKey, object.objectType, object.objectName]);
        if (this.shared.listRefusals.get(refusalKey)) return undefined;
        try {
          const listed = await this.read(
            `list|${object.objectType}|${object.objectName}|latest`,
            this.context(object, ''),
            async (s) =>
              (await this.reader.listVersions(object.objectType, object.objectName, s, MAX_LATEST_PAGES)) ??
              'too-many-pages',
            signal,
          );
          return listed === 'too-many-pages' ? undefined : (listed as VersionProperties[]);
        } catch (err) {
          if ((err as { reason?: unknown }).reason !== 'KeyVaultAccessDenied') throw err;
          this.shared.listRefusals.set(refusalKey, true);
          this.logger.info('azure provider: this identity may not list versions; rotations read the value instead', {
            objectType: object.objectType,
            objectName: object.objectName,
          });
          return undefined;
        }
      },
    };
  }
}
