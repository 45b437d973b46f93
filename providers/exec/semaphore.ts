// Bounds how many helpers run at once across all Mounts (--max-concurrent-helpers):
// a class of many objects, or many pods starting together, must not fork hundreds of
// processes on a node.
import { SscError } from '../../proto/runtime/errors.js';

/** A counting semaphore whose waits end when their Mount is cancelled. */
export class Semaphore {
  private active = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly limit: number) {}

  /** Helpers running now (for tests and logs). */
  get running(): number {
    return this.active;
  }

  /**
   * Waits for a slot; resolves with its release (call it exactly once). Rejects with
   * DEADLINE_EXCEEDED (`HelperTimeout`) when `signal` aborts first.
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    const release = (): void => {
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.active--;
    };
    if (signal.aborted) return Promise.reject(cancelled());
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(once(release));
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(cancelled());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}

function cancelled(): SscError {
  return new SscError('deadline-exceeded', `exec provider: the Mount ended while waiting for a helper slot (--max-concurrent-helpers)`, { reason: 'HelperTimeout' });
}
