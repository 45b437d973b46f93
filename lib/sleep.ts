/** Sleeps `ms`, or rejects early when `signal` aborts. Injected so tests never wait. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real Sleep, on timers. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
