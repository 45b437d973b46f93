// The dynamic secrets this provider issued and the driver may have mounted, held in
// memory only (never on disk) so that a Mount within the lease's validity is answered
// with the SAME files instead of a fresh credential (lease-policy.ts decides when).
// A held lease is found only through the objects it produced: the identity that issued
// it, each object's configuration and the version the provider returned for it. A
// Mount of another identity, of an edited object, or whose driver has another version
// mounted (another pod, a stale entry) finds nothing and issues anew.
// Bounded by a count and a byte size (ended leases go first, then the least recently
// used); a lease is dropped once it ends. No timers: ended leases are dropped whenever
// the store is used. lru-cache holds the leases (bounds, order of use, each lease's end);
// the store keeps the index from versions to leases in step through its dispose hook.
// The data is a secret: it is never logged, and neither the store nor a held lease shows
// it to util.inspect, JSON.stringify or String().
import { LRUCache } from 'lru-cache';
import { INSPECT_CUSTOM } from '../../lib/inspect-custom.js';
import { lifeUntil, ttlClock, type TtlClock } from '../framework/lru-options.js';
import { leaseEnd, type MountedLease } from './lease-policy.js';
import type { VaultObject } from './objects.js';
import { objectConfigKey } from './request-key.js';

/** Most leases held by default: one per pod and dynamic request on the node is typical. */
export const DEFAULT_MAX_LEASES = 1000;
/** Most bytes of issued data held by default (a certificate with its key and chain is a few KiB). */
export const DEFAULT_MAX_LEASE_BYTES = 16 * 1024 * 1024;

/** A lease the provider holds, with the response data it came with. */
export interface HeldLease extends MountedLease {
  readonly leaseId: string;
  /** The issued response's data, rendered again for a Mount; not enumerable, so it is not printed by accident. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** An object of a Mount and the version the driver has mounted for it (undefined: none). */
export interface MountedObject {
  readonly object: VaultObject;
  readonly version: string | undefined;
}

/** An object a lease's response produced, and the version the provider returned for it. */
export interface ProducedObject {
  readonly object: VaultObject;
  readonly version: string;
}

/** Why a lease left the store: it ended, made room, was too large to hold, or was released. */
export type LeaseDropReason = 'ended' | 'capacity' | 'too-large' | 'released';

/** Options of a LeaseStore. */
export interface LeaseStoreOptions {
  /** Most leases held; 0 holds none. */
  readonly maxLeases?: number;
  /** Most bytes of issued data held (approximate: the data as JSON). */
  readonly maxBytes?: number;
  /** The clock, epoch ms. */
  readonly now?: () => number;
  /** Called when a lease leaves the store (for a metric; it gets no secret). */
  readonly onDrop?: (reason: LeaseDropReason) => void;
}

interface Entry {
  lease: HeldLease;
  readonly identityKey: string;
  readonly indexKeys: readonly string[];
  /** Its size for the byte bound: a whole number ≥ 1, as lru-cache requires. */
  readonly bytes: number;
}

/** The metric reason of a lease lru-cache let go of; undefined when the store says itself. */
const DROP_REASONS: Readonly<Partial<Record<LRUCache.DisposeReason, LeaseDropReason>>> = {
  evict: 'capacity',
  expire: 'ended',
};

/** A held lease with `data` not enumerable (hidden from util.inspect and JSON.stringify). */
function held(leaseId: string, lease: MountedLease, data: Readonly<Record<string, unknown>>): HeldLease {
  const value = {
    leaseId,
    expiresAtMs: lease.expiresAtMs,
    ttlMs: lease.ttlMs,
    renewable: lease.renewable,
    tokenExpiresAtMs: lease.tokenExpiresAtMs,
  };
  return Object.freeze(Object.defineProperty(value, 'data', { value: data, enumerable: false })) as HeldLease;
}

/** The approximate size of a JSON value in bytes: what bounds hold in memory. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** Issued dynamic secrets by identity, object configuration and produced version; memory only. */
export class LeaseStore {
  /** By identity and lease id, each until its lease ends; none when nothing may be held (lru-cache refuses 0). */
  readonly #entries: LRUCache<string, Entry> | undefined;
  /** (identity, object configuration, version) → the entry's key. */
  readonly #index = new Map<string, string>();
  readonly #maxBytes: number;
  /** The clock, as lru-cache reads it (ttlClock). */
  readonly #clock: TtlClock;
  readonly #onDrop: (reason: LeaseDropReason) => void;

  constructor(options: LeaseStoreOptions = {}) {
    const maxLeases = Math.floor(options.maxLeases ?? DEFAULT_MAX_LEASES);
    this.#maxBytes = Math.floor(options.maxBytes ?? DEFAULT_MAX_LEASE_BYTES);
    this.#clock = ttlClock(options.now ?? Date.now);
    this.#onDrop = options.onDrop ?? (() => undefined);
    this.#entries =
      maxLeases >= 1 && this.#maxBytes >= 1
        ? new LRUCache<string, Entry>({
            max: maxLeases,
            maxSize: this.#maxBytes,
            sizeCalculation: (entry) => entry.bytes,
            ...this.#clock,
            dispose: (entry, key, reason) => this.#dropped(key, entry, reason),
          })
        : undefined;
  }

  /**
   * The lease whose response produced what the driver has mounted for every one of
   * `objects` (one Vault request's group), if held and not ended; undefined means issue
   * anew. Every object must have a mounted version, and all must lead to one lease.
   */
  find(identityKey: string, objects: readonly MountedObject[]): HeldLease | undefined {
    this.sweep();
    let found: string | undefined;
    for (const { object, version } of objects) {
      if (version === undefined) return undefined;
      const key = this.#index.get(indexKey(identityKey, object, version));
      if (key === undefined || (found !== undefined && key !== found)) return undefined;
      found = key;
    }
    const entry = found === undefined ? undefined : this.#entries?.peek(found);
    if (!entry || entry.identityKey !== identityKey) return undefined;
    this.#entries?.get(found as string); // now the most recently used
    return entry.lease;
  }

  /**
   * Holds a newly issued lease for the objects its response produced. Returns false
   * when it is not held (already ended, or larger than the byte bound): the Mount still
   * succeeds, and the next one issues anew. Call it once the Mount is answered, so a
   * failed Mount holds nothing.
   */
  hold(
    identityKey: string,
    produced: readonly ProducedObject[],
    leaseId: string,
    lease: MountedLease,
    data: Readonly<Record<string, unknown>>,
  ): boolean {
    this.sweep();
    const key = entryKey(identityKey, leaseId);
    this.#entries?.delete(key);
    const life = lifeUntil(this.#clock.perf.now(), leaseEnd(lease));
    if (produced.length === 0 || life === undefined) return false;
    const bytes = jsonBytes(data) + leaseId.length;
    if (this.#entries === undefined || bytes > this.#maxBytes) {
      this.#onDrop('too-large');
      return false;
    }
    const indexKeys = produced.map((p) => indexKey(identityKey, p.object, p.version));
    // Evicts the least recently used leases as the bounds require (dispose: 'capacity').
    const entry: Entry = { lease: held(leaseId, lease, data), identityKey, indexKeys, bytes: Math.max(1, bytes) };
    this.#entries.set(key, entry, life);
    // A version points to one lease: a newer issue producing the same version replaces the link.
    for (const k of indexKeys) this.#index.set(k, key);
    return true;
  }

  /** Records a renewal of a held lease (renewOutcome's lease); false if it is no longer held. */
  renewed(identityKey: string, leaseId: string, lease: MountedLease): boolean {
    const key = entryKey(identityKey, leaseId);
    // Even if it ended while being renewed: the renewal gives it a new end.
    const entry = this.#entries?.peek(key, { allowStale: true });
    if (!entry) return false;
    entry.lease = held(leaseId, lease, entry.lease.data);
    const life = lifeUntil(this.#clock.perf.now(), leaseEnd(entry.lease));
    if (life === undefined) {
      this.#entries?.delete(key);
      this.#onDrop('ended');
    } else {
      // The same entry again: no dispose, a new end, now the most recently used.
      this.#entries?.set(key, entry, life);
    }
    return true;
  }

  /** Forgets a lease (it is being issued anew, or failed to renew). */
  release(identityKey: string, leaseId: string): void {
    if (this.#entries?.delete(entryKey(identityKey, leaseId))) this.#onDrop('released');
  }

  /** Drops every lease that has ended. Called by most other methods; callable on its own. */
  sweep(): void {
    this.#entries?.purgeStale();
  }

  /** Leases held now (ended ones may still count until the next sweep). */
  get size(): number {
    return this.#entries?.size ?? 0;
  }

  /** Approximate bytes of issued data held now. */
  get bytes(): number {
    return this.#entries?.calculatedSize ?? 0;
  }

  /** lru-cache let go of `entry` (evicted, ended, deleted or replaced): its versions no longer lead to it. */
  #dropped(key: string, entry: Entry, reason: LRUCache.DisposeReason): void {
    for (const k of entry.indexKeys) if (this.#index.get(k) === key) this.#index.delete(k);
    const dropReason = DROP_REASONS[reason];
    if (dropReason !== undefined) this.#onDrop(dropReason);
  }

  /** A summary without secrets, for util.inspect, String() and JSON.stringify. */
  toString(): string {
    return `LeaseStore { leases: ${this.size}, bytes: ${this.bytes} }`;
  }

  toJSON(): { leases: number; bytes: number } {
    return { leases: this.size, bytes: this.bytes };
  }

  [INSPECT_CUSTOM](): string {
    return this.toString();
  }
}

function entryKey(identityKey: string, leaseId: string): string {
  return JSON.stringify([identityKey, leaseId]);
}

function indexKey(identityKey: string, object: VaultObject, version: string): string {
  return JSON.stringify([identityKey, objectConfigKey(object), version]);
}
