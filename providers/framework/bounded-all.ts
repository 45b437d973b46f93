// Runs a Mount's vault requests a few at a time. A class of many objects must not open a
// socket and hold an answer for every object at once (10,000 objects took 428 MB and
// 40,000 ran out of file descriptors), and when one object fails the Mount fails: the
// calls still running are aborted and no more start, so a failing Mount stops reading.

/** Vault (or Key Vault) calls one Mount runs at once. */
export const MOUNT_CONCURRENCY = 8;

/**
 * `fn(item, signal)` for every item, at most `limit` at once, results in item order.
 * The first failure rejects at once and aborts `signal` for the calls still running
 * (with the failure as reason); so does `parent` aborting. No item starts after that.
 */
export async function boundedAll<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, signal: AbortSignal) => Promise<R>,
  parent?: AbortSignal,
): Promise<R[]> {
  const stop = new AbortController();
  const signal = parent ? AbortSignal.any([parent, stop.signal]) : stop.signal;
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      if (signal.aborted) throw signal.reason;
      const i = next++;
      results[i] = await fn(items[i] as T, signal);
    }
  };
  const workers = Array.from({ length: Math.min(Math.max(1, limit), items.length) }, () => worker());
  try {
    await Promise.all(workers);
  } catch (err) {
    stop.abort(err);
    // The others end soon (their calls see the signal); their failures are not this Mount's.
    await Promise.allSettled(workers);
    throw err;
  }
  return results;
}
