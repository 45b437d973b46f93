/**
 * Runs `work` for every item with at most `limit` at a time per group (e.g. per
 * provider), all groups in parallel. Resolves when all are done; never rejects
 * (`work` reports its own failures).
 */
export async function forEachLimited<T>(items: readonly T[], groupOf: (item: T) => string, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const g = groupOf(item);
    const list = groups.get(g) ?? [];
    list.push(item);
    groups.set(g, list);
  }
  const runners: Promise<void>[] = [];
  for (const list of groups.values()) {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < list.length) {
        const item = list[next++] as T;
        await work(item).catch(() => undefined);
      }
    };
    for (let i = 0; i < Math.min(limit, list.length); i++) runners.push(worker());
  }
  await Promise.all(runners);
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
    void next.then(() => { if (this.tails.get(key) === next) this.tails.delete(key); });
    return next;
  }
}
