// Key Vault throttles with 429 and a Retry-After header (and its gateway with 503). The
// SDK's own retry would sleep for whatever the header says, past the Mount's deadline,
// until the call is cancelled; so the Key Vault clients run with SDK retries off and
// each read goes through here: a throttled read waits as asked and tries again while
// the wait fits before the deadline, and fails at once, saying so, when it does not.
// A connection reset (a kept-alive socket the server closed) is retried after a short
// pause as the SDK would. Throttling that outlasts the deadline is RESOURCE_EXHAUSTED with
// the wait as gRPC pushback (`grpc-retry-pushback-ms`): the driver's rotation then leaves
// the class and service account alone that long (driver/rotation/class-backoff.ts).
import { SscError } from '../../lib/errors.js';
import { retryAfterMs } from '../framework/retry-after.js';

/** Attempts of one read, the first included. */
export const MAX_ATTEMPTS = 4;
/** Pause before retrying a reset connection, doubled each time. */
const RESET_PAUSE_MS = 200;
/** Wait assumed when a 429 carries no usable Retry-After. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** The clock and sleep the retry uses (injected in tests). */
export interface RetryClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

interface HttpErrorShape {
  readonly statusCode?: unknown;
  readonly code?: unknown;
  readonly response?: { readonly headers?: { get(name: string): string | undefined } };
}

/**
 * How long a throttled response asks to wait, in ms (`retry-after-ms`,
 * `x-ms-retry-after-ms`, else `Retry-After` as seconds or an HTTP date); undefined when
 * the error is not throttling.
 */
export function throttleWaitMs(err: unknown, nowMs: number): number | undefined {
  const e = (typeof err === 'object' && err !== null ? err : {}) as HttpErrorShape;
  const status = e.statusCode;
  const header = (name: string): string | undefined => e.response?.headers?.get(name) ?? undefined;
  if (status !== 429 && status !== 503) return undefined;
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const v = header(name);
    if (v !== undefined && /^[0-9]{1,9}$/.test(v.trim())) return Number(v.trim());
  }
  const retryAfter = retryAfterMs(header('retry-after'), nowMs);
  if (retryAfter !== undefined) return retryAfter;
  // A 503 without a header is an outage, not throttling: not retried here.
  return status === 429 ? DEFAULT_RETRY_AFTER_MS : undefined;
}

function isReset(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as HttpErrorShape).code : undefined;
  return typeof code === 'string' && RESET_CODES.has(code);
}

/**
 * `read()` with throttling and reset retries bounded by `deadlineMs` (epoch ms; none:
 * no bound but MAX_ATTEMPTS). A wait that would end past the deadline fails at once
 * with RESOURCE_EXHAUSTED `KeyVaultThrottled` naming the wait; other errors pass through.
 */
export async function withThrottleRetry<T>(
  read: () => Promise<T>,
  what: string,
  deadlineMs: number | undefined,
  signal: AbortSignal,
  clock: RetryClock,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || signal.aborted) throw err;
      const now = clock.now();
      const throttled = throttleWaitMs(err, now);
      const wait = throttled ?? (isReset(err) ? RESET_PAUSE_MS * 2 ** (attempt - 1) : undefined);
      if (wait === undefined) throw err;
      if (deadlineMs !== undefined && now + wait >= deadlineMs) {
        if (throttled === undefined) throw err;
        const left = Math.max(0, Math.round((deadlineMs - now) / 100) / 10);
        throw new SscError(
          'resource-exhausted',
          `azure provider: key vault throttled ${what} and asked to wait ${Math.ceil(wait / 1000)}s, more than the ${left}s left before the Mount's deadline`,
          { reason: 'KeyVaultThrottled', cause: err, retryAfterMs: wait },
        );
      }
      await clock.sleep(wait, signal);
    }
  }
}
