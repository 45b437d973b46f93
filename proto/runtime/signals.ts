/** Calls `stop` once on the first SIGTERM or SIGINT; a second signal exits at once. */
export function onTerminationSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    stop(signal).then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
