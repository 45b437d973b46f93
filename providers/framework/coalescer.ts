// At most one call in flight per key: callers that arrive while a call for their key
// runs wait for it and share its result (a "singleflight"). Many pods of one workload
// rotating in the same round then cost one vault login or read per identity, not one
// per pod. Nothing is remembered once the call settles: a failure reaches every caller
// waiting on it and the next caller tries again. The shared call is cancelled only
// when every caller waiting on it has given up, so one pod's cancelled Mount does not
// fail the others'.

/** A call in flight and who waits on it. */
interface Flight<T> {
  readonly promise: Promise<T>;
  readonly controller: AbortController;
  waiters: number;
  settled: boolean;
}

/** Called when a caller joins a call already in flight (for a metric). */
export type CoalescedHook = () => void;

/** Runs one call per key at a time and shares it with every caller of that key meanwhile. */
export class Coalescer<T> {
  readonly #flights = new Map<string, Flight<T>>();

  constructor(private readonly onCoalesced: CoalescedHook = () => undefined) {}

  /**
   * `fn()` for `key`, or the result of the call for `key` already in flight. `fn` gets
   * a signal that aborts when every caller waiting on the call has given up; a caller
   * whose own `signal` aborts stops waiting at once with the signal's reason.
   */
  coalesce(key: string, fn: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let flight = this.#flights.get(key);
    if (flight) {
      this.onCoalesced();
    } else {
      flight = this.#start(key, fn);
    }
    return this.#wait(key, flight, signal);
  }

  /** Keys with a call in flight now. */
  get inFlight(): number {
    return this.#flights.size;
  }

  #start(key: string, fn: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const controller = new AbortController();
    // An async wrapper turns a synchronous throw of fn into a rejection like any other.
    const promise = (async () => fn(controller.signal))();
    const flight: Flight<T> = { promise, controller, waiters: 0, settled: false };
    const done = (): void => {
      flight.settled = true;
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    };
    promise.then(done, done);
    this.#flights.set(key, flight);
    return flight;
  }

  #wait(key: string, flight: Flight<T>, signal: AbortSignal | undefined): Promise<T> {
    flight.waiters++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = (): void => {
        if (left) return;
        left = true;
        signal?.removeEventListener('abort', onAbort);
        flight.waiters--;
        if (flight.waiters > 0 || flight.settled) return;
        // Nobody waits any more: cancel the call, and let the next caller start afresh
        // rather than join a call that is being cancelled.
        if (this.#flights.get(key) === flight) this.#flights.delete(key);
        flight.controller.abort(signal?.reason);
      };
      const onAbort = (): void => {
        leave();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(
        (value) => {
          leave();
          resolve(value);
        },
        (err: unknown) => {
          leave();
          reject(err);
        },
      );
    });
  }
}
