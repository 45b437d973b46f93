import winston from 'winston';

/** A winston transport, as winston's type definitions give it. */
type Transport = winston.Logger['transports'][number];

// winston exports its transports' base class as `Transport` at run time; its type
// definitions call it `transport` (a name that is undefined at run time).
const TransportStream = (winston as unknown as { Transport: new () => Transport }).Transport;

/** winston's key (triple-beam's MESSAGE) of the text its formats made of an entry. */
const MESSAGE = Symbol.for('message');

/**
 * A winston transport writing each line to process.stderr, looked up at each line (tests
 * replace its write). Unlike winston's Console transport it schedules nothing per line: a
 * setImmediate per line costs CPU and keeps every entry of a burst alive until the event
 * loop turns (docs/dependencies.md has the measurement). As Node writes stderr: synchronous
 * for a file or a terminal; for a pipe synchronous until the pipe is full, then Node queues
 * the rest instead of blocking, and a process exit waits for that queue (exit.ts, signals.ts).
 */
class StderrTransport extends TransportStream {
  override log(info: Record<symbol, unknown>, next: () => void): void {
    process.stderr.write(`${String(info[MESSAGE])}\n`);
    // The write is done: without this, the stream would finish it on a process.nextTick of
    // its own, one per line, each holding the line's state until the turn ends (a burst of
    // lines stays in memory: docs/dependencies.md). winston's Logger does the same in its _transform.
    (this as unknown as { _writableState: { sync: boolean } })._writableState.sync = false;
    next();
  }
}

/**
 * Adds a StderrTransport to `logger`. It writes every entry it gets, an entry with a field
 * `exception: true` included: winston's transports drop those unless they handle exceptions.
 */
export function addStderrTransport(logger: winston.Logger): void {
  const transport = new StderrTransport();
  logger.add(transport);
  // Set after add(): add() would install winston's uncaughtException handler for a
  // transport that handles exceptions, and a crash must stay Node's own.
  transport.handleExceptions = true;
}
