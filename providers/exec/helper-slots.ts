// Bounds how many helpers run at once across all Mounts (--max-concurrent-helpers):
// a class of many objects, or many pods starting together, must not fork hundreds of
// processes on a node. The queue is p-queue's.
import PQueue from 'p-queue';
import { SscError } from '../../lib/errors.js';

/** Runs helper calls at most `limit` at a time, in the order they came; a wait ends when its Mount is cancelled. */
export class HelperSlots {
  private readonly queue: PQueue;

  constructor(readonly limit: number) {
    this.queue = new PQueue({ concurrency: limit });
  }

  /** Helper calls running now (for tests and logs). */
  get running(): number {
    return this.queue.pending;
  }

  /** Helper calls waiting for a slot. */
  get waiting(): number {
    return this.queue.size;
  }

  /**
   * Runs `call` in a slot and answers what it answers; the slot is held until `call` has
   * settled. Rejects with DEADLINE_EXCEEDED (`HelperTimeout`) when `signal` aborts
   * before a slot was free, and then never runs `call`.
   */
  async run<R>(signal: AbortSignal, call: () => Promise<R>): Promise<R> {
    if (signal.aborted) throw cancelled();
    // p-queue drops a waiting task whose signal aborts (rejecting it with the signal's
    // reason), but it also races the signal against a running task and frees the slot at
    // the abort, while the helper is still being killed. So the queue gets a signal that
    // follows the Mount's only while the call waits; once it runs, the helper runner
    // answers the Mount's cancellation and the slot is freed when the helper is gone.
    const waiting = new AbortController();
    const follow = (): void => waiting.abort(signal.reason);
    signal.addEventListener('abort', follow, { once: true });
    let started = false;
    try {
      return await this.queue.add(
        () => {
          started = true;
          signal.removeEventListener('abort', follow);
          return call();
        },
        { signal: waiting.signal },
      );
    } catch (err) {
      if (!started && waiting.signal.aborted) throw cancelled();
      throw err;
    } finally {
      signal.removeEventListener('abort', follow);
    }
  }
}

function cancelled(): SscError {
  return new SscError(
    'deadline-exceeded',
    `exec provider: the Mount ended while waiting for a helper slot (--max-concurrent-helpers)`,
    { reason: 'HelperTimeout' },
  );
}
