import { exitAfterOutput } from './exit.js';

/**
 * Calls `stop` once on the first SIGTERM or SIGINT, then exits once the log lines are
 * written (exit.ts); a second signal exits at once.
 */
export function onTerminationSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    stop(signal).then(
      () => exitAfterOutput(0),
      () => exitAfterOutput(1),
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
