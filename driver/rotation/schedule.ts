import { createHash } from 'node:crypto';
import { parseGoDuration } from '../../lib/duration.js';

/** The result of one refresh of a volume, as the schedule needs it. */
export type RefreshResult = 'unchanged' | 'changed' | 'failed' | 'skipped';

/** What the schedule remembers per volume (no secret data: times and counts only). */
interface VolumeState {
  lastAttempt: number;
  lastSuccess: number | undefined;
  failures: number;
}

/** Longest backoff after repeated failures, as a multiple of the interval. */
const MAX_BACKOFF_FACTOR = 8;
/** Jitter: each volume is offset by up to this fraction of its interval. */
const JITTER_FRACTION = 0.1;

/** A stable offset in [0, 1) for a volume, so volumes spread evenly across an interval. */
export function jitterOf(key: string): number {
  return createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Decides when each mounted volume is due for a refresh (pure, clock passed in):
 * every interval after its last attempt, spread by a stable per-volume jitter, with
 * exponential backoff after consecutive failures (capped at 8 intervals).
 */
export class RotationSchedule {
  private readonly volumes = new Map<string, VolumeState>();

  /** When `key` is next due, in ms since the epoch; a volume never seen is due now. */
  nextDue(key: string, intervalMs: number): number {
    const s = this.volumes.get(key);
    if (!s) return Number.NEGATIVE_INFINITY;
    const factor = Math.min(2 ** s.failures, MAX_BACKOFF_FACTOR);
    return s.lastAttempt + intervalMs * factor + jitterOf(key) * intervalMs * JITTER_FRACTION;
  }

  /** True when `key` should be refreshed at `now`. */
  isDue(key: string, intervalMs: number, now: number): boolean {
    return now >= this.nextDue(key, intervalMs);
  }

  /** True when `key` was refreshed successfully less than `intervalMs` ago (republish no-op). */
  isFresh(key: string, intervalMs: number, now: number): boolean {
    const last = this.volumes.get(key)?.lastSuccess;
    return last !== undefined && now - last < intervalMs;
  }

  /** Records the outcome of a refresh (or of a publish, which counts as one). */
  record(key: string, result: RefreshResult, now: number): void {
    const s = this.volumes.get(key) ?? { lastAttempt: now, lastSuccess: undefined, failures: 0 };
    // A skipped volume (pod going away, target busy) waits a whole interval too: without
    // that it would be due again at once, making rounds spin every second.
    s.lastAttempt = now;
    this.volumes.set(key, s);
    if (result === 'skipped') return;
    if (result === 'failed') s.failures++;
    else {
      s.failures = 0;
      s.lastSuccess = now;
    }
    this.volumes.set(key, s);
  }

  /** Forgets one volume (it was unpublished). */
  forget(key: string): void {
    this.volumes.delete(key);
  }

  /** Forgets volumes that are no longer mounted, so the map does not grow without bound. */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.volumes.keys()) if (!keys.has(key)) this.volumes.delete(key);
  }

  /** Number of volumes tracked. */
  get size(): number {
    return this.volumes.size;
  }
}

/**
 * A class's own interval from its rotation-poll-interval annotation (Go duration, at
 * least 1 s), else `defaultMs`; `invalid` says the annotation was there but unusable.
 */
export function annotatedInterval(
  raw: string | undefined,
  defaultMs: number,
): { readonly ms: number; readonly invalid: boolean } {
  if (raw === undefined) return { ms: defaultMs, invalid: false };
  try {
    const ms = parseGoDuration(raw);
    if (ms >= 1000) return { ms, invalid: false };
  } catch {
    /* invalid below */
  }
  return { ms: defaultMs, invalid: true };
}
