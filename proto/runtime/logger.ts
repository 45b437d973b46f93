import winston from 'winston';

/** Log levels accepted by --log-level. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
/** One of LOG_LEVELS. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The logger every module receives; children add fixed fields such as `component`. */
export type Logger = winston.Logger;

/**
 * Keys whose values are replaced by "[REDACTED]" wherever they appear in a log entry:
 * they hold secret values (a CSI request's `secrets`, tokens, a Secret's `data`, file
 * contents, keys). Names are not values: `secret` ("ns/name" of a synced Secret),
 * `secretName` and `secretProviderClass` are logged as they are (docs/configuration.md#logs).
 */
const SENSITIVE_KEYS = new Set([
  'secrets', 'token', 'tokens', 'password', 'passphrase', 'contents', 'data', 'stringData',
  'csi.storage.k8s.io/serviceAccount.tokens', 'authorization', 'privateKey', 'key',
]);

/** camelCase names of values: accessToken, clientSecret, dbPassword (not secretName). */
const SENSITIVE_SUFFIX = /^[a-z][A-Za-z0-9]*(Token|Tokens|Secret|Secrets|Password|Passphrase|PrivateKey)$/;

/** Whether a log field named `key` holds a secret value. */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(key) || SENSITIVE_SUFFIX.test(key);
}

/** Deep copy of `value` with sensitive keys redacted; safe for objects with cycles. */
export function redact(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => redact(v, seen));
  else {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) copy[k] = isSensitiveKey(k) ? '[REDACTED]' : redact(v, seen);
    out = copy;
  }
  // Only the chain of parents counts as a cycle: a shared, non-cyclic object is copied again.
  seen.delete(value);
  return out;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'message') continue;
    const record = info as Record<string, unknown>;
    record[key] = isSensitiveKey(key) ? '[REDACTED]' : redact(record[key]);
  }
  return info;
});

/** A JSON logger writing to stderr (stdout stays free for CLI output). */
export function createLogger(options: { level?: LogLevel; component: string; silent?: boolean }): Logger {
  // component goes on a child, not defaultMeta: winston assigns defaultMeta over every
  // entry, which would overwrite the component of child loggers.
  return winston.createLogger({
    level: options.level ?? 'info',
    silent: options.silent ?? false,
    format: winston.format.combine(winston.format.timestamp(), redactFormat(), winston.format.json()),
    transports: [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'] })],
  }).child({ component: options.component });
}

/** Parses a --log-level value. */
export function parseLogLevel(value: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === value);
  if (!level) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return level;
}
