import winston from 'winston';
import { isSensitiveKey, REDACTED, redact } from './log-redaction.js';

/**
 * The winston format that hides secret values: every field of an entry but `level` and a
 * string `message` becomes its redact() copy (log-redaction.ts), a field under a sensitive
 * key "[REDACTED]". It never throws: a format that throws would throw into the log call.
 */
export const redaction = winston.format((info) => {
  const fields = info as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key === 'level' || (key === 'message' && typeof fields[key] === 'string')) continue;
    fields[key] = isSensitiveKey(key) ? REDACTED : redact(fields[key]);
  }
  return info;
});

/**
 * The format of every line: `timestamp` (ISO 8601, UTC) unless the entry has one, the
 * redaction, then winston's JSON (keys sorted, BigInts as strings). No `splat` format:
 * a `%` in a message is text, never a placeholder that takes the fields.
 */
export function lineFormat(): winston.Logform.Format {
  return winston.format.combine(winston.format.timestamp(), redaction(), winston.format.json());
}
