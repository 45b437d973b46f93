import type { Sleep } from '../../lib/sleep.js';

/** How one call is retried. */
export interface RetryPlan<T> {
  readonly attempts: number;
  readonly deadline: Date;
  readonly sleep: Sleep;
  readonly signal?: AbortSignal | undefined;
  readonly isRetryable: (err: unknown) => boolean;
  readonly attempt: () => Promise<T>;
  /** First backoff; doubles each retry. */
  readonly baseDelayMs?: number;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, runs out of
 * attempts, or the next backoff would pass the deadline; then the last error is thrown.
 */
export async function callWithRetry<T>(plan: RetryPlan<T>): Promise<T> {
  let delay = plan.baseDelayMs ?? 100;
  for (let i = 1; ; i++) {
    // A caller that went away before this attempt (or during the backoff) sends nothing more.
    if (plan.signal?.aborted) throw plan.signal.reason;
    try {
      return await plan.attempt();
    } catch (err) {
      const last =
        i >= plan.attempts ||
        !plan.isRetryable(err) ||
        Date.now() + delay >= plan.deadline.getTime() ||
        plan.signal?.aborted === true;
      if (last) throw err;
      await plan.sleep(delay, plan.signal);
      delay *= 2;
    }
  }
}
