import pLimit from 'p-limit';

/**
 * Runs `work` for every item with at most `limit` at a time per group (e.g. per
 * provider), all groups in parallel: one p-limit limiter per group, items started in
 * their order. Resolves when all are done; never rejects (`work` reports its own
 * failures; a rejection or a throw of `work` is dropped and the next item starts).
 * Nothing here stops early: a caller that is stopping makes `work` return at once.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  groupOf: (item: T) => string,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const limiters = new Map<string, ReturnType<typeof pLimit>>();
  await Promise.all(
    items.map((item) => {
      const group = groupOf(item);
      let limiter = limiters.get(group);
      if (!limiter) limiters.set(group, (limiter = pLimit(limit)));
      return limiter(() => work(item)).catch(() => undefined);
    }),
  );
}

/**
 * Runs operations one after another per key, in the order they were queued, and lets
 * different keys run in parallel. A key's chain is dropped once it is idle.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Queues `op` after the operations already queued for `key`; resolves when it has run (never rejects). */
  run(key: string, op: () => Promise<void>): Promise<void> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(op).catch(() => undefined);
    this.tails.set(key, next);
    void next.then(() => {
      if (this.tails.get(key) === next) this.tails.delete(key);
    });
    return next;
  }
}
