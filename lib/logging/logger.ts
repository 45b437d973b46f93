import winston from 'winston';
import { lineFormat } from './log-format.js';
import { UNREADABLE } from './log-redaction.js';
import { addStderrTransport } from './log-transport.js';

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

/** Our levels as winston levels: a lower number is more severe, as in winston's npm levels. */
const WINSTON_LEVELS: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3 };

/** An object without prototype: an own `__proto__` field stays a field instead of replacing the prototype. */
function fieldsObject(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/** Copies `value`'s own enumerable fields into `into`; a getter that throws leaves "[Unreadable]". */
function copyOwnFields(value: object, into: Record<string, unknown>): void {
  let keys: string[];
  try {
    keys = Object.keys(value);
  } catch {
    return;
  }
  for (const key of keys) into[key] = read(value, key, UNREADABLE);
}

/** `value[key]`, or `fallback` when the getter throws. */
function read(value: object, key: string, fallback?: unknown): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return fallback;
  }
}

/**
 * The entry (winston's `info`) of one log call, built as winston's own log methods build
 * it: an object with a truthy `message` is the entry itself (an Error adds its `stack` and
 * `cause`); `(message, fields)` appends the fields' own `message` to the text and takes
 * their `stack` and `cause`; any further argument, or non-object fields, are dropped.
 * `level` is always the call's level. Built here rather than by winston because winston
 * drops the fields of a message with a `%` in it (it reads one as a placeholder) and lets
 * a throwing getter throw into the caller.
 */
function entryFields(
  level: LogLevel,
  args: readonly unknown[],
  context: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const entry = Object.assign(fieldsObject(), context);
  const [first, meta] = args;
  if (args.length === 1 && typeof first === 'object' && first !== null && read(first, 'message')) {
    copyOwnFields(first, entry);
    if (first instanceof Error) {
      entry['stack'] = first.stack;
      entry['message'] = first.message;
      entry['cause'] = first.cause;
    }
  } else if (args.length >= 2 && typeof meta === 'object' && meta !== null) {
    copyOwnFields(meta, entry);
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

/**
 * Logger over one winston logger. Children are ours, not winston's child(): its
 * Object.assign would throw on a throwing getter and turn an own `__proto__` field into
 * the entry's prototype. Every child of one createLogger shares its winston logger.
 */
class WinstonLogger implements Logger {
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;

  constructor(
    private readonly winstonLogger: winston.Logger,
    readonly level: LogLevel,
    private readonly context: Readonly<Record<string, unknown>>,
  ) {
    this.error = this.method('error');
    this.warn = this.method('warn');
    this.info = this.method('info');
    this.debug = this.method('debug');
  }

  isLevelEnabled(level: LogLevel): boolean {
    return !this.winstonLogger.silent && this.winstonLogger.isLevelEnabled(level);
  }

  child(fields: Record<string, unknown>): Logger {
    const context = Object.assign(fieldsObject(), this.context);
    copyOwnFields(fields, context);
    return new WinstonLogger(this.winstonLogger, this.level, context);
  }

  private method(level: LogLevel): LogMethod {
    // winston would run its formats on an entry its transports then drop: a level that is
    // not written builds, reads, redacts and serialises nothing.
    if (!this.isLevelEnabled(level)) return () => undefined;
    // log(info) with one argument: winston takes the entry as it is (no splat, no defaultMeta).
    return (...args: unknown[]) => {
      this.winstonLogger.log(entryFields(level, args, this.context) as winston.LogEntry);
    };
  }
}

/**
 * A JSON-lines logger writing to stderr (stdout stays free for CLI output): a winston
 * logger with lineFormat() (log-format.ts) and a StderrTransport (log-transport.ts). A
 * line is written before the log call returns, so before a gRPC answer sent after it.
 */
export function createLogger(options: { level?: LogLevel; component: string; silent?: boolean }): Logger {
  const level = options.level ?? 'info';
  const winstonLogger = winston.createLogger({
    levels: WINSTON_LEVELS,
    level,
    silent: options.silent ?? false,
    format: lineFormat(),
  });
  addStderrTransport(winstonLogger);
  // component is a child field, not winston's defaultMeta: winston assigns defaultMeta
  // over every entry, so a child's component (driver/main.ts) would be overwritten.
  const context = fieldsObject();
  context['component'] = options.component;
  return new WinstonLogger(winstonLogger, level, context);
}

/** Parses a --log-level value. */
export function parseLogLevel(value: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return level;
}
