// Every Vault call gets a timeout (node-vault has none by default), bounded by the
// Mount's deadline so an answer, even an error, reaches the driver before it gives up.
import { callTimeoutMs } from '../framework/call-deadline.js';

/** Timeout of one Vault call when the Mount's deadline is further away (or unknown). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/**
 * The timeout for a Vault call starting at `nowMs`: `defaultMs`, or less to end
 * DEADLINE_MARGIN_MS before `deadlineMs`; 0 when there is no time left for a call.
 */
export function requestTimeoutMs(
  deadlineMs: number | undefined,
  nowMs: number,
  defaultMs = DEFAULT_REQUEST_TIMEOUT_MS,
): number {
  return callTimeoutMs(deadlineMs, nowMs, defaultMs);
}
