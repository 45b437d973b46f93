// Waiting for a state of the Kubernetes API that another process brings about (the
// driver's background re-sync, the garbage collector): poll the API until the check holds,
// bounded by a deadline, instead of sleeping for a guessed time.

/**
 * Resolves with the first truthy value `check` returns, polling every 100 ms; rejects
 * after `timeoutMs` with `what` and the last error `check` threw. Returns how long it took.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return { value, ms: Date.now() - started };
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The HTTP status of an error from @kubernetes/client-node (404 when an object is gone). */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}
