// What the providers' caches share when they use lru-cache: a count bound that does not
// allocate up front, a TTL clock a test can drive, and TTLs that end an entry exactly when
// our caches always ended it. lru-cache counts an entry stale only once it is strictly
// older than its ttl, and takes a ttl or a start time of 0 as "never stale": these
// helpers keep both from turning a bound into no bound.
// Some of these caches hold secrets. lru-cache publishes each get and set (key and value)
// on the diagnostics channel 'lru-cache:metrics' only while something in the process
// subscribes to it: nothing in the providers does (keep it so).
import type { Perf } from 'lru-cache';

/** The options entryBound sets. */
export interface EntryBound {
  readonly maxSize: number;
  readonly sizeCalculation: () => number;
}

/**
 * Options bounding an lru-cache to `entries` entries (at least 1) without allocating room
 * for all of them at construction: lru-cache's `max` preallocates arrays of that length
 * (17 to 28 bytes an entry, so gigabytes for a large --cache-size), while `maxSize` with every
 * entry weighing 1 grows with use and evicts the same least recently used entry.
 */
export function entryBound(entries: number): EntryBound {
  if (!Number.isSafeInteger(entries) || entries < 1) {
    throw new RangeError(`an lru-cache bound must be a whole number ≥ 1, got ${entries}`);
  }
  return { maxSize: entries, sizeCalculation: () => 1 };
}

/** The options ttlClock sets. */
export interface TtlClock {
  readonly perf: Perf;
  readonly ttlResolution: 0;
}

/**
 * Options making an lru-cache read TTL time from `now` (epoch ms, or a test's clock) at
 * every check: by default it reuses one reading for a millisecond of real time (a timer),
 * so a test clock's jump could be seen late. Readings below 1 count as 1, since lru-cache
 * takes a start time of 0 as "no TTL": a clock at 0 would make every entry immortal.
 */
export function ttlClock(now: () => number): TtlClock {
  return { perf: { now: () => Math.max(1, now()) }, ttlResolution: 0 };
}

/**
 * The lru-cache `ttl` of entries that must be gone `durationMs` after they are stored,
 * as our caches counted it (gone AT the end): one ms less, since lru-cache keeps an entry
 * while its age is at most its ttl. On a clock with fractions of a ms an entry may go up
 * to 1 ms early, never late.
 */
export function ttlOf(durationMs: number): number {
  const ttl = Math.ceil(durationMs) - 1;
  if (!(ttl >= 1)) throw new RangeError(`an lru-cache ttl must last more than 1 ms, got ${durationMs}`);
  return ttl;
}

/** An entry's lru-cache `ttl` and `start` (set options). */
export interface EntryLife {
  readonly ttl: number;
  readonly start: number;
}

/**
 * The lru-cache `ttl` and `start` of an entry stored at `startMs` that must be gone once
 * the clock reaches `endMs` (see ttlOf); undefined when it ends within 1 ms, so it must not
 * be stored (a ttl of 0 would keep it for good).
 */
export function lifeUntil(startMs: number, endMs: number): EntryLife | undefined {
  const ttl = Math.ceil(endMs - startMs) - 1;
  return ttl >= 1 ? { ttl, start: startMs } : undefined;
}
