/** First wait before retrying a failed Secret sync. */
export const SYNC_RETRY_FIRST_MS = 1000;
/** Longest wait between two retries of a failed Secret sync. */
export const SYNC_RETRY_MAX_MS = 5 * 60 * 1000;
/** Jitter takes up to this share off each wait, so many volumes failing at once spread out. */
const JITTER = 0.2;

/**
 * The wait before retry number `retry` (0 for the first) of a Secret sync that failed
 * while its volume stays mounted: 1s doubling up to 5m, less up to 20%
 * jitter (`random` in [0, 1), injected so tests are exact). Never above the 5m bound.
 */
export function syncRetryDelayMs(retry: number, random: number): number {
  const exponent = Math.max(0, Math.min(retry, 30));
  const base = Math.min(SYNC_RETRY_FIRST_MS * 2 ** exponent, SYNC_RETRY_MAX_MS);
  const r = Math.min(Math.max(random, 0), 1);
  return Math.round(base * (1 - JITTER * r));
}
