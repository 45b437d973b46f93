// A timer for a call's deadline. Node timers fire after at most 2^31-1 ms (about 24.8
// days) and fire at once, with a warning, for anything longer; a grpc-timeout may say
// 99999999H, so long waits are re-armed in steps instead.

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fire` once the clock passes `deadlineMs` (epoch ms); returns a function that cancels it. */
export function onDeadline(deadlineMs: number, fire: () => void, now: () => number = Date.now): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = deadlineMs - now();
    if (left > MAX_TIMER_MS) timer = setTimeout(arm, MAX_TIMER_MS);
    else timer = setTimeout(fire, Math.max(0, left));
  };
  arm();
  return () => clearTimeout(timer);
}
