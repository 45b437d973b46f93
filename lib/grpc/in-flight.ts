import { SscError } from '../errors.js';

/**
 * The calls a server is running, so shutdown can cancel them and wait for their cleanup
 * (a SIGTERM during a first publish left its tmpfs mounted). Handlers see
 * `signal` through their call context; once it aborts, new calls are refused.
 */
export class InFlightCalls {
  private readonly shutdown = new AbortController();
  private readonly running = new Set<Promise<unknown>>();

  /** `serverName` names the process in the error cancelled calls fail with ("driver"). */
  constructor(private readonly serverName: string) {}

  /** Aborted when shutdown begins; its reason is the UNAVAILABLE error calls fail with. */
  get signal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** Number of calls running now (for tests). */
  get size(): number {
    return this.running.size;
  }

  /** Keeps `call` in the set until it settles; returns it unchanged. */
  track<T>(call: Promise<T>): Promise<T> {
    this.running.add(call);
    const remove = () => {
      this.running.delete(call);
    };
    call.then(remove, remove);
    return call;
  }

  /**
   * Aborts every call, refuses new ones, and waits until the running ones settled (their
   * rollback included) or `timeoutMs` passed. True when all settled in time.
   */
  async cancelAll(timeoutMs: number): Promise<boolean> {
    // UNAVAILABLE, not ABORTED: nothing conflicted with the call; this process is going
    // away, and the caller (kubelet) retries against the next one.
    this.shutdown.abort(
      new SscError(
        'unavailable',
        `the ${this.serverName} is shutting down and cancelled this call; it can be retried`,
        { reason: 'ShuttingDown' },
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const settled = Promise.allSettled([...this.running]).then(() => true as const);
    try {
      return await Promise.race([settled, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
