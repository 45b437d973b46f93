import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** How long a paced loop may hold the event loop before it lets other work run. */
export const DEFAULT_SLICE_MS = 10;

/** How many steps pass between two looks at the clock (a clock read costs ~50 ns). */
const STEPS_PER_CHECK = 64;

/**
 * Lets a long synchronous loop (decoding, validating or writing a response of hundreds of
 * thousands of files) give the event loop back every few milliseconds, so Probe, other
 * volumes' publishes and the metrics server keep answering. Once per item:
 * `if (pacer.due()) await pacer.pause();` (no promise per item while the slice lasts).
 * Pausing is a setImmediate, so pending I/O callbacks run first.
 */
export class Pacer {
  private sliceStart: number;
  private steps = 0;

  constructor(
    private readonly sliceMs = DEFAULT_SLICE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sliceStart = now();
  }

  /** True when this slice has used its time (the clock is read every 64 calls). */
  due(): boolean {
    if (++this.steps % STEPS_PER_CHECK !== 0) return false;
    return this.now() - this.sliceStart >= this.sliceMs;
  }

  /** Gives the event loop one turn, then starts a new slice. */
  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.sliceStart = this.now();
  }
}
