import type { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { unmountAllUnder } from './proc.js';

/**
 * What every benchmark's main() does around its measurements: progress lines on stderr,
 * Ctrl-C (SIGINT, SIGTERM) turned into an abort its waits see, and its work directory
 * removed at the end with anything still mounted under it.
 */

/** Progress lines on stderr, `bench <name>: …` (stdout carries the table). */
export function progressLine(name: string): (text: string) => void {
  const prefix = name === '' ? 'bench' : `bench ${name}`;
  return (text) => {
    process.stderr.write(`${prefix}: ${text}\n`);
  };
}

/** Ctrl-C for a benchmark: `signal` aborts on SIGINT or SIGTERM while listening; `check()` throws once it did. */
export class Interrupt {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  private readonly onSignal = () => this.controller.abort();

  /** `signals`: where SIGINT and SIGTERM come from (the process; a test's own emitter). */
  constructor(private readonly signals: Pick<EventEmitter, 'on' | 'off'> = process) {}

  /** Takes SIGINT and SIGTERM (the run then ends through its cleanup instead of at once). */
  listen(): void {
    this.signals.on('SIGINT', this.onSignal);
    this.signals.on('SIGTERM', this.onSignal);
  }

  /** Gives SIGINT and SIGTERM back. */
  release(): void {
    this.signals.off('SIGINT', this.onSignal);
    this.signals.off('SIGTERM', this.onSignal);
  }

  /** Throws "interrupted" once a signal came. */
  check(): void {
    if (this.signal.aborted) throw new Error('interrupted');
  }
}

/** Unmounts whatever is still mounted under `work` (saying how many), then removes it. */
export async function removeWorkDir(work: string, progress: (text: string) => void): Promise<void> {
  const leftover = await unmountAllUnder(work);
  if (leftover.length > 0) progress(`unmounted ${leftover.length} leftover mount(s) under ${work}`);
  await rm(work, { recursive: true, force: true });
}
