// The one piece of a helper's output that reaches an error message (and so the driver's
// log, a Kubernetes event and the gRPC status): the first line of its stderr, with every
// secret the helper was given replaced, control characters escaped, at most 200 chars.
import { printable } from '../../lib/untrusted-text.js';

/** Characters of stderr shown in an error. */
export const STDERR_SHOWN_CHARS = 200;
/** What replaces a secret value in the shown line. */
export const REDACTED = '[redacted]';

/**
 * The first non-empty line of `stderr` for an error message. Secrets are replaced in the
 * whole captured text before it is cut into lines, so a secret holding a newline, or one
 * that crosses the 200-character cut, is never shown in part. `secrets` longest first.
 */
export function stderrSummary(stderr: Buffer, secrets: readonly string[]): string {
  let text = stderr.toString('utf8');
  for (const secret of secrets) if (secret !== '') text = text.split(secret).join(REDACTED);
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return printable(line.trim(), STDERR_SHOWN_CHARS);
}
