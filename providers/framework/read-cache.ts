// A short-window cache of a vault's reads (Vault GETs, Key Vault gets and version
// listings), so that many pods of one workload (one identity) rotating in the same
// round cost one read per (identity, request), not one per pod. A read is reused for `windowMs` (default 5 s) counted from when it was sent,
// so nothing served is older than the window; identical reads in flight meanwhile are
// coalesced onto one request. Entries are keyed by the identity first: a read is never
// served to another identity, whose policies may not allow it.
// What it holds is secret (parsed vault responses): memory only, never written to disk
// or logged, hidden from util.inspect, JSON.stringify and String(); bounded by a count
// and a byte size (expired entries go first, then the least recently used). lru-cache
// holds the entries; coalescing stays with Coalescer, as lru-cache's fetch() would cancel
// a read shared by many Mounts when one of them gives up, and would hand a read that is
// not shareable to every caller that joined it.
// Failed reads are not cached: every caller waiting on one gets its error and the next
// caller reads again. A response the caller marks as not shareable (one with a lease:
// `database/creds/…` is a GET that issues credentials) is neither cached nor handed to
// the callers that joined it: each of them reads for itself. PUT and POST never come
// here (they issue; lease-store.ts keeps what they issued).
import { LRUCache } from 'lru-cache';
import { INSPECT_CUSTOM } from '../../lib/inspect-custom.js';
import { parseDurationFlag } from '../../lib/duration.js';
import { Coalescer } from './coalescer.js';
import { lifeUntil, ttlClock, type TtlClock } from './lru-options.js';

/** Reads reused within this many milliseconds by default. */
export const DEFAULT_READ_WINDOW_MS = 5_000;
/** --read-cache-window (every provider with a read window): a Go duration from 0 to 1h, in ms. */
export function parseReadCacheWindowFlag(raw: string): number {
  return parseDurationFlag('read-cache-window', raw, { example: '5s, or 0', min: [0, '0'], max: [3_600_000, '1h'] });
}

/** Most reads cached by default. */
export const DEFAULT_READ_CACHE_ENTRIES = 1000;
/** Most bytes of reads cached by default. */
export const DEFAULT_READ_CACHE_BYTES = 8 * 1024 * 1024;
/** Expired reads are looked for at most this often when there is room (a look walks every entry). */
export const READ_CACHE_PURGE_INTERVAL_MS = 1_000;

/** Counters for provider metrics; none of them gets a secret. */
export interface ReadCacheHooks {
  /** A read served from the window without calling the vault. */
  readonly hit?: () => void;
  /** A read that went to the vault. */
  readonly miss?: () => void;
  /** A read that joined an identical read in flight. */
  readonly coalesced?: () => void;
}

/** Options of a ReadCache. */
export interface ReadCacheOptions<V> {
  /** How long a read is reused, from when it was sent; 0 only coalesces reads in flight. */
  readonly windowMs?: number;
  /** Most entries; 0 caches nothing (reads in flight are still coalesced). */
  readonly maxEntries?: number;
  /** Most bytes, as measured by `weigh`. */
  readonly maxBytes?: number;
  /** The approximate size of a value in bytes (e.g. its JSON length). */
  readonly weigh: (value: V) => number;
  /** Whether a value may serve other Mounts; default: all may. */
  readonly shareable?: (value: V) => boolean;
  /** The clock, epoch ms. */
  readonly now?: () => number;
  readonly hooks?: ReadCacheHooks;
}

/** What a read in flight hands to the callers that joined it. */
type Outcome<V> =
  { readonly shared: true; readonly value: V } | { readonly shared: false; readonly value: V; readonly reader: object };

/** A vault's reads by (identity, request), reused for a short window; memory only. */
export class ReadCache<V extends NonNullable<unknown>> {
  /** Reads by key, each with its size and time left; none when nothing may be kept. */
  readonly #entries: LRUCache<string, V> | undefined;
  readonly #flights: Coalescer<Outcome<V>>;
  readonly #windowMs: number;
  readonly #maxBytes: number;
  readonly #weigh: (value: V) => number;
  readonly #shareable: (value: V) => boolean;
  /** The clock, as lru-cache reads it (ttlClock). */
  readonly #clock: TtlClock;
  readonly #hooks: ReadCacheHooks;
  /** When expired reads were last dropped. */
  #purgedAtMs = Number.NEGATIVE_INFINITY;

  constructor(options: ReadCacheOptions<V>) {
    this.#windowMs = options.windowMs ?? DEFAULT_READ_WINDOW_MS;
    const maxEntries = options.maxEntries ?? DEFAULT_READ_CACHE_ENTRIES;
    this.#maxBytes = Math.floor(options.maxBytes ?? DEFAULT_READ_CACHE_BYTES);
    this.#weigh = options.weigh;
    this.#shareable = options.shareable ?? (() => true);
    this.#clock = ttlClock(options.now ?? Date.now);
    this.#hooks = options.hooks ?? {};
    this.#flights = new Coalescer(() => this.#hooks.coalesced?.());
    // lru-cache refuses bounds of 0, which here mean "only coalesce".
    this.#entries =
      maxEntries >= 1 && this.#maxBytes >= 1 && this.#windowMs > 0
        ? new LRUCache<string, V>({ max: Math.floor(maxEntries), maxSize: this.#maxBytes, ...this.#clock })
        : undefined;
  }

  /**
   * The value of the GET `requestKey` as `identityKey`: from the window, from an
   * identical read in flight, or from `load` (given a signal that aborts once every
   * caller waiting on it gave up). `signal` is this caller's own: when it aborts, this
   * caller stops waiting.
   */
  async read(
    identityKey: string,
    requestKey: string,
    load: (signal: AbortSignal) => Promise<V>,
    signal?: AbortSignal,
  ): Promise<V> {
    const key = JSON.stringify([identityKey, requestKey]);
    // An expired entry is dropped here and reads as a miss; a fresh one becomes the most recently used.
    const cached = this.#entries?.get(key);
    if (cached !== undefined) {
      this.#hooks.hit?.();
      return cached;
    }
    const reader = {};
    const outcome = await this.#flights.coalesce(
      key,
      async (flightSignal) => {
        this.#hooks.miss?.();
        const sentAtMs = this.#clock.perf.now();
        const value = await load(flightSignal);
        if (!this.#shareable(value)) return { shared: false, value, reader };
        this.#store(key, value, sentAtMs + this.#windowMs);
        return { shared: true, value };
      },
      signal,
    );
    if (outcome.shared || outcome.reader === reader) return outcome.value;
    // Joined a read whose answer belongs to the caller that sent it: read for itself.
    this.#hooks.miss?.();
    return load(signal ?? new AbortController().signal);
  }

  /** Entries held now (expired ones may still count until a later store). */
  get size(): number {
    return this.#entries?.size ?? 0;
  }

  /** Approximate bytes held now. */
  get bytes(): number {
    return this.#entries?.calculatedSize ?? 0;
  }

  /** Keeps `value` until `expiresAtMs`, unless it has expired already or is larger than the byte bound. */
  #store(key: string, value: V, expiresAtMs: number): void {
    if (this.#entries === undefined) return;
    const life = lifeUntil(this.#clock.perf.now(), expiresAtMs);
    // lru-cache takes sizes as whole numbers ≥ 1 (and throws on others): a NaN weight is not kept.
    const bytes = Math.max(1, Math.ceil(this.#weigh(value)));
    if (life === undefined || !(bytes <= this.#maxBytes)) return;
    // Expired entries go before any live one is evicted to make room, and otherwise within
    // a second, so their secrets do not stay: lru-cache drops them only when asked.
    const now = life.start;
    const full = this.#entries.size >= this.#entries.max || this.#entries.calculatedSize + bytes > this.#maxBytes;
    if (full || now < this.#purgedAtMs || now - this.#purgedAtMs >= READ_CACHE_PURGE_INTERVAL_MS) {
      this.#entries.purgeStale();
      this.#purgedAtMs = now;
    }
    this.#entries.set(key, value, { ...life, size: bytes });
  }

  /** A summary without secrets, for util.inspect, String() and JSON.stringify. */
  toString(): string {
    return `ReadCache { entries: ${this.size}, bytes: ${this.bytes}, windowMs: ${this.#windowMs} }`;
  }

  toJSON(): { entries: number; bytes: number; windowMs: number } {
    return { entries: this.size, bytes: this.bytes, windowMs: this.#windowMs };
  }

  [INSPECT_CUSTOM](): string {
    return this.toString();
  }
}
