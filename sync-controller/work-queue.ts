/**
 * Keys waiting for work, run at most `limit` at a time; a key is never run twice at
 * once: queued again while it runs, it runs once more afterwards (what changed while it
 * ran is seen). Failures are the worker's to report; a rejection is dropped.
 */
export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private stopped = false;
  private held = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly work: (key: string) => Promise<void>,
  ) {}

  /** Queues `key` (once, however often it is added before it runs). */
  add(key: string): void {
    if (this.stopped) return;
    if (this.running.has(key)) this.again.add(key);
    else this.waiting.add(key);
    this.pump();
  }

  /** Keys added from now on wait (deduplicated) until release(). */
  hold(): void {
    this.held = true;
  }

  /** Runs what waits. */
  release(): void {
    this.held = false;
    this.pump();
  }

  /** Stops taking work; resolves when what runs has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    this.again.clear();
    if (this.running.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    for (const key of this.waiting) {
      if (this.stopped || this.held || this.running.size >= this.limit) return;
      this.waiting.delete(key);
      this.running.add(key);
      void this.work(key)
        .catch(() => undefined)
        .finally(() => this.finished(key));
    }
  }

  private finished(key: string): void {
    this.running.delete(key);
    if (this.again.delete(key)) this.waiting.add(key);
    if (this.running.size === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
    this.pump();
  }
}

/** Share of the poll interval by which each SecretSync's next poll is moved, at random (no thundering herd). */
export const POLL_JITTER = 0.2;

/** The delay to a SecretSync's next poll: the interval ± 10%, from `random` in [0, 1). */
export function nextPollDelay(intervalMs: number, random: number): number {
  return Math.round(intervalMs * (1 - POLL_JITTER / 2 + POLL_JITTER * random));
}
