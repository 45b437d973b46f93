// The dynamic secrets this provider issued and the driver may have mounted, held in
// memory only (never on disk) so that a Mount within the lease's validity is answered
// with the SAME files instead of a fresh credential (lease-policy.ts decides when).
// A held lease is found only through the objects it produced: the identity that issued
// it, each object's configuration and the version the provider returned for it. A
// Mount of another identity, of an edited object, or whose driver has another version
// mounted (another pod, a stale entry) finds nothing and issues anew.
// Bounded by a count and a byte size (ended leases go first, then the least recently
// used); a lease is dropped once it ends. No timers: ended leases are dropped whenever
// the store is used. The data is a secret: it is never logged, and neither the store
// nor a held lease shows it to util.inspect, JSON.stringify or String().
import { INSPECT_CUSTOM } from '../../proto/runtime/inspect-custom.js';
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
  readonly bytes: number;
}

/** A held lease with `data` not enumerable (hidden from util.inspect and JSON.stringify). */
function held(leaseId: string, lease: MountedLease, data: Readonly<Record<string, unknown>>): HeldLease {
  const value = { leaseId, expiresAtMs: lease.expiresAtMs, ttlMs: lease.ttlMs, renewable: lease.renewable, tokenExpiresAtMs: lease.tokenExpiresAtMs };
  return Object.freeze(Object.defineProperty(value, 'data', { value: data, enumerable: false })) as HeldLease;
}

/** The approximate size of a JSON value in bytes: what bounds hold in memory. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** Issued dynamic secrets by identity, object configuration and produced version; memory only. */
export class LeaseStore {
  /** By identity and lease id; a Map iterates in insertion order, so the first is the least recently used. */
  readonly #entries = new Map<string, Entry>();
  /** (identity, object configuration, version) → the entry's key. */
  readonly #index = new Map<string, string>();
  readonly #maxLeases: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #onDrop: (reason: LeaseDropReason) => void;
  #bytes = 0;

  constructor(options: LeaseStoreOptions = {}) {
    this.#maxLeases = options.maxLeases ?? DEFAULT_MAX_LEASES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_LEASE_BYTES;
    this.#now = options.now ?? Date.now;
    this.#onDrop = options.onDrop ?? (() => undefined);
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
    const entry = found === undefined ? undefined : this.#entries.get(found);
    if (!entry || entry.identityKey !== identityKey) return undefined;
    this.#touch(found as string, entry);
    return entry.lease;
  }

  /**
   * Holds a newly issued lease for the objects its response produced. Returns false
   * when it is not held (already ended, or larger than the byte bound): the Mount still
   * succeeds, and the next one issues anew. Call it once the Mount is answered, so a
   * failed Mount holds nothing.
   */
  hold(identityKey: string, produced: readonly ProducedObject[], leaseId: string, lease: MountedLease, data: Readonly<Record<string, unknown>>): boolean {
    this.sweep();
    const key = entryKey(identityKey, leaseId);
    this.#remove(key);
    if (produced.length === 0 || leaseEnd(lease) <= this.#now()) return false;
    const bytes = jsonBytes(data) + leaseId.length;
    if (this.#maxLeases <= 0 || bytes > this.#maxBytes) {
      this.#onDrop('too-large');
      return false;
    }
    while (this.#entries.size >= this.#maxLeases || this.#bytes + bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next().value as string;
      this.#remove(oldest);
      this.#onDrop('capacity');
    }
    const indexKeys = produced.map((p) => indexKey(identityKey, p.object, p.version));
    // A version points to one lease: a newer issue producing the same version replaces the link.
    for (const k of indexKeys) this.#index.set(k, key);
    this.#entries.set(key, { lease: held(leaseId, lease, data), identityKey, indexKeys, bytes });
    this.#bytes += bytes;
    return true;
  }

  /** Records a renewal of a held lease (renewOutcome's lease); false if it is no longer held. */
  renewed(identityKey: string, leaseId: string, lease: MountedLease): boolean {
    const key = entryKey(identityKey, leaseId);
    const entry = this.#entries.get(key);
    if (!entry) return false;
    entry.lease = held(leaseId, lease, entry.lease.data);
    this.#touch(key, entry);
    return true;
  }

  /** Forgets a lease (it is being issued anew, or failed to renew). */
  release(identityKey: string, leaseId: string): void {
    if (this.#remove(entryKey(identityKey, leaseId))) this.#onDrop('released');
  }

  /** Drops every lease that has ended. Called by every other method; callable on its own. */
  sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (leaseEnd(entry.lease) > now) continue;
      this.#remove(key);
      this.#onDrop('ended');
    }
  }

  /** Leases held now (ended ones may still count until the next sweep). */
  get size(): number {
    return this.#entries.size;
  }

  /** Approximate bytes of issued data held now. */
  get bytes(): number {
    return this.#bytes;
  }

  #touch(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#entries.set(key, entry);
  }

  #remove(key: string): boolean {
    const entry = this.#entries.get(key);
    if (!entry) return false;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    for (const k of entry.indexKeys) if (this.#index.get(k) === key) this.#index.delete(k);
    return true;
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
