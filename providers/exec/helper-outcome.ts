// What a helper run means for the Mount: the content or version it gave, or the error
// that fails the whole Mount. Pure, table-tested; the messages name the object and the
// helper and show at most the first line of stderr, redacted (helper-stderr.ts).
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { EXIT_NO_VERSION_SUPPORT, exitMeaning } from './exec-errors.js';
import type { HelperOutcome } from './helper-runner.js';
import { stderrSummary } from './helper-stderr.js';
import type { HelperOperation } from './invocation.js';

/** Longest version a helper may print. */
export const MAX_VERSION_CHARS = 128;

/** Which call an outcome is of, for messages and limits. */
export interface CallContext {
  readonly operation: HelperOperation;
  readonly objectName: string;
  readonly helper: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  /** Values the stderr line must not show (invocation.ts secretValues). */
  readonly secrets: readonly string[];
}

function what(c: CallContext): string {
  return `helper ${quoted(c.helper, 64)} ${c.operation} ${quoted(c.objectName, 128)}`;
}

function withStderr(stderr: Buffer, c: CallContext): string {
  const line = stderrSummary(stderr, c.secrets);
  return line === '' ? ' (no stderr)' : `: ${line}`;
}

/** The error for any outcome but a clean exit; undefined for exit 0 (and exit 3 of `version`). */
export function outcomeError(outcome: HelperOutcome, c: CallContext): SscError | undefined {
  switch (outcome.kind) {
    case 'start-failed':
      return new SscError(
        'failed-precondition',
        `exec provider: ${what(c)} could not start (${outcome.errno}): is its #! interpreter installed?`,
        { reason: 'HelperStartFailed' },
      );
    case 'timeout':
      return new SscError(
        'deadline-exceeded',
        `exec provider: ${what(c)} ran longer than ${c.timeoutMs} ms and was killed${withStderr(outcome.stderr, c)}`,
        { reason: 'HelperTimeout' },
      );
    case 'cancelled':
      return new SscError(
        'deadline-exceeded',
        `exec provider: ${what(c)} was killed: the Mount ended (its deadline passed or another object failed)`,
        { reason: 'HelperTimeout' },
      );
    case 'too-large':
      return new SscError(
        'resource-exhausted',
        `exec provider: ${what(c)} printed more than ${c.maxOutputBytes} bytes (--max-output-bytes) and was killed`,
        { reason: 'HelperOutputTooLarge' },
      );
    case 'exited': {
      if (outcome.code === 0) return undefined;
      if (c.operation === 'version' && outcome.code === EXIT_NO_VERSION_SUPPORT) return undefined;
      const meaning = exitMeaning(outcome.code);
      const how =
        outcome.code === null ? `was killed by ${outcome.signal ?? 'a signal'}` : `exited with ${outcome.code}`;
      return new SscError(meaning.kind, `exec provider: ${what(c)} ${how}${withStderr(outcome.stderr, c)}`, {
        reason: meaning.reason,
      });
    }
  }
}

/**
 * The version a `version` call printed: one line of 1–128 printable ASCII characters
 * (a final newline allowed); undefined for exit 3 (no version support: the provider
 * digests the content). Throws FAILED_PRECONDITION (`HelperBadVersion`) for anything
 * else, never quoting it (it could be a secret printed by mistake).
 */
export function versionFrom(outcome: HelperOutcome, c: CallContext): string | undefined {
  const error = outcomeError(outcome, c);
  if (error) throw error;
  if (outcome.kind !== 'exited' || outcome.code === EXIT_NO_VERSION_SUPPORT) return undefined;
  const text = outcome.stdout.toString('latin1').replace(/\r?\n$/, '');
  if (!new RegExp(`^[\\x20-\\x7e]{1,${MAX_VERSION_CHARS}}$`).test(text) || text.trim() !== text) {
    throw new SscError(
      'failed-precondition',
      `exec provider: ${what(c)} printed no version: one line of 1 to ${MAX_VERSION_CHARS} ` +
        `printable ASCII characters without leading or trailing spaces is expected (exit 3 when the ` +
        `helper has no versions)`,
      { reason: 'HelperBadVersion' },
    );
  }
  return text;
}

/** The content a `get` call printed; throws the outcome's error. */
export function contentFrom(outcome: HelperOutcome, c: CallContext): Buffer {
  const error = outcomeError(outcome, c);
  if (error) throw error;
  if (outcome.kind !== 'exited') throw new Error('unreachable: a run that did not exit has an error');
  return outcome.stdout;
}
