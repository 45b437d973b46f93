// Every Vault call gets a timeout (node-vault has none by default), bounded by the
// Mount's deadline so an answer, even an error, reaches the driver before it gives up.

/** Timeout of one Vault call when the Mount's deadline is further away (or unknown). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** Kept free before the Mount's deadline to build and send the error. */
export const DEADLINE_MARGIN_MS = 250;

/**
 * The timeout for a call starting at `nowMs`: `defaultMs`, or less to end
 * DEADLINE_MARGIN_MS before `deadlineMs`; 0 when there is no time left for a call.
 */
export function requestTimeoutMs(
  deadlineMs: number | undefined,
  nowMs: number,
  defaultMs = DEFAULT_REQUEST_TIMEOUT_MS,
): number {
  if (deadlineMs === undefined) return defaultMs;
  return Math.max(0, Math.min(defaultMs, deadlineMs - nowMs - DEADLINE_MARGIN_MS));
}
