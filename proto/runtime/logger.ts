import { redactedFieldJson, UNREADABLE_JSON } from './log-redaction.js';

export { isSensitiveKey, redact } from './log-redaction.js';

/** Log levels accepted by --log-level. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
/** One of LOG_LEVELS. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Writes one entry at a level: `(message, fields?)`, or one object carrying `message`
 * and the fields (an Error logs its message and stack).
 */
export type LogMethod = (message: string | object, fields?: object) => void;

/** The logger every module receives; children add fixed fields such as `component`. */
export interface Logger {
  // Writable: a test may replace one method to capture what is logged.
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  /** The least severe level written. */
  readonly level: LogLevel;
  /** Whether an entry at `level` would be written: guard costly debug fields with it. */
  isLevelEnabled(level: LogLevel): boolean;
  /** A logger adding `fields` to every entry; an entry's own fields win over them. */
  child(fields: Record<string, unknown>): Logger;
}

const SEVERITY: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3 };

/** Where finished lines go: one call per line, newline included. */
type LineSink = (line: string) => void;

/** The object of `value`'s own enumerable fields; a getter that throws leaves a marker, not an exception. */
function ownFields(value: object, into: Record<string, unknown>): void {
  let keys: string[];
  try {
    keys = Object.keys(value);
  } catch {
    return;
  }
  for (const key of keys) {
    try {
      into[key] = (value as Record<string, unknown>)[key];
    } catch {
      into[key] = UNREADABLE;
    }
  }
}

/** Stands for a field whose getter threw while the entry was built. */
const UNREADABLE: unique symbol = Symbol('unreadable');

/**
 * The fields of one entry from a log call's arguments, built as winston 3 built them (the
 * line shape this project has always written): an object with a truthy `message` is the
 * entry itself (an Error adds its `stack` and `cause`); `(message, fields)` appends the
 * fields' own `message` to the text and takes their `stack` and `cause`; any further
 * argument, or non-object fields, are dropped. `level` is always the call's level. Unlike
 * winston, a `%` in the message never drops the fields (winston read it as a format).
 */
export function entryFields(level: LogLevel, args: readonly unknown[], context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  // No prototype: an own `__proto__` field stays a field instead of replacing the prototype.
  const entry: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, context);
  const [first, meta] = args;
  if (args.length === 1 && typeof first === 'object' && first !== null && read(first, 'message')) {
    ownFields(first, entry);
    if (first instanceof Error) {
      entry['stack'] = first.stack;
      entry['message'] = first.message;
      entry['cause'] = first.cause;
    }
  } else if (args.length >= 2 && typeof meta === 'object' && meta !== null) {
    ownFields(meta, entry);
    entry['message'] = first;
    const [message, stack, cause] = [read(meta, 'message'), read(meta, 'stack'), read(meta, 'cause')];
    if (message) entry['message'] = `${String(first)} ${String(message)}`;
    if (stack) entry['stack'] = stack;
    if (cause) entry['cause'] = cause;
  } else {
    entry['message'] = args.length === 0 ? '' : first;
  }
  entry['level'] = level;
  return entry;
}

/** `value[key]`, undefined when the getter throws. */
function read(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/**
 * One JSON line: keys sorted, `timestamp` (ISO 8601, UTC) added unless the entry has
 * one, every field but `level` and a string `message` redacted (log-redaction.ts).
 */
export function formatEntry(entry: Record<string, unknown>, now: () => Date = () => new Date()): string {
  if (!entry['timestamp']) entry['timestamp'] = now().toISOString();
  let line = '{';
  for (const key of Object.keys(entry).sort()) {
    const value = entry[key];
    let text: string | undefined;
    if (value === UNREADABLE) text = UNREADABLE_JSON;
    else if (key === 'level' || (key === 'message' && typeof value === 'string')) text = JSON.stringify(value);
    else text = redactedFieldJson(key, value);
    if (text === undefined) continue;
    if (line.length > 1) line += ',';
    line += `${JSON.stringify(key)}:${text}`;
  }
  return `${line}}\n`;
}

class JsonLogger implements Logger {
  readonly error: LogMethod;
  readonly warn: LogMethod;
  readonly info: LogMethod;
  readonly debug: LogMethod;

  constructor(readonly level: LogLevel, private readonly silent: boolean, private readonly context: Readonly<Record<string, unknown>>, private readonly sink: LineSink) {
    this.error = this.method('error');
    this.warn = this.method('warn');
    this.info = this.method('info');
    this.debug = this.method('debug');
  }

  isLevelEnabled(level: LogLevel): boolean {
    return !this.silent && SEVERITY[level] <= SEVERITY[this.level];
  }

  child(fields: Record<string, unknown>): Logger {
    const context: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, this.context);
    ownFields(fields, context);
    return new JsonLogger(this.level, this.silent, context, this.sink);
  }

  private method(level: LogLevel): LogMethod {
    // Nothing is built, redacted or serialised for a level that is not written.
    if (!this.isLevelEnabled(level)) return () => undefined;
    return (...args: unknown[]) => this.sink(formatEntry(entryFields(level, args, this.context)));
  }
}

/**
 * Writes to process.stderr, looked up at each line (tests replace its write), as
 * winston's Console transport did: synchronous for a file or a terminal; for a pipe
 * synchronous until the pipe is full, then Node queues the rest instead of blocking. A
 * process exit waits for that queue (exit.ts, signals.ts) so the last lines are not lost.
 */
function stderrSink(line: string): void {
  process.stderr.write(line);
}

/** A JSON-lines logger writing to stderr (stdout stays free for CLI output). */
export function createLogger(options: { level?: LogLevel; component: string; silent?: boolean }): Logger {
  const context: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, { component: options.component });
  return new JsonLogger(options.level ?? 'info', options.silent ?? false, context, stderrSink);
}

/** Parses a --log-level value. */
export function parseLogLevel(value: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return level;
}
