/**
 * Kept free before a Mount's deadline: a provider's own answer, even an error, reaches
 * the driver before the driver gives up and reports a bare DEADLINE_EXCEEDED.
 */
export const DEADLINE_MARGIN_MS = 250;

/**
 * How long a call to the vault (or a helper) starting at `nowMs` may take: `limitMs`, or
 * less so that it ends DEADLINE_MARGIN_MS before the Mount's `deadlineMs`; 0 when no time is left.
 */
export function callTimeoutMs(deadlineMs: number | undefined, nowMs: number, limitMs: number): number {
  if (deadlineMs === undefined) return limitMs;
  return Math.max(0, Math.min(limitMs, deadlineMs - nowMs - DEADLINE_MARGIN_MS));
}
