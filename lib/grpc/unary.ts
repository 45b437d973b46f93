import type * as grpc from '@grpc/grpc-js';
import { grpcCodeOf, SscError, toSscError } from '../errors.js';
import { pushbackMetadata } from './retry-pushback.js';
import type { InFlightCalls } from './in-flight.js';
import type { Logger } from '../logging/logger.js';

/** What an async handler receives besides the request. */
export interface CallContext {
  /** Aborted when the client cancels, the call's deadline passes or the server shuts down. */
  readonly signal: AbortSignal;
  /** The client's deadline, if it set one. */
  readonly deadline: Date | undefined;
}

/** An async unary handler: returns the response or throws (an SscError, ideally). */
export type AsyncUnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/** Called once per finished call: for metrics and logs. */
export type CallObserver = (method: string, error: SscError | undefined, durationMs: number) => void;

/** The call's deadline as a Date; undefined when the client set none (grpc-js reports Infinity). */
function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): Date | undefined {
  const d = call.getDeadline();
  if (d instanceof Date) return d;
  return Number.isFinite(d) ? new Date(d) : undefined;
}

/** setTimeout fires at once for delays over 2^31-1 ms: far-off deadlines are clamped. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a call's signal aborts, as the errors a handler rethrowing `signal.reason` fails with. */
const CANCELLED_BY_CALLER = (): SscError =>
  new SscError('aborted', 'the caller cancelled the call', { reason: 'Cancelled' });
const DEADLINE_PASSED = (): SscError =>
  new SscError('deadline-exceeded', "the caller's deadline passed", { reason: 'DeadlineExceeded' });

/**
 * An abort signal for one call: aborted when the client cancels (grpc-js's 'cancelled',
 * also emitted when the client's deadline passes), when the deadline passes by the server's
 * own clock, or when `shutdown` aborts. `release`, called once the handler settled, detaches
 * it: grpc-js emits 'cancelled' after every finished call too (grpc/grpc-node#2771), which
 * must not abort work still holding the signal. The shutdown listener is removed per call
 * rather than joined by AbortSignal.any, which would leave one attached for every call.
 */
function callSignal(
  call: grpc.ServerUnaryCall<unknown, unknown>,
  deadline: Date | undefined,
  shutdown: AbortSignal | undefined,
): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onShutdown = (): void => controller.abort(shutdown?.reason);
  shutdown?.addEventListener('abort', onShutdown, { once: true });
  // grpc-js cancels the call at the client's deadline too, usually before our own timer.
  const onCancelled = (): void =>
    controller.abort(deadline && Date.now() >= deadline.getTime() ? DEADLINE_PASSED() : CANCELLED_BY_CALLER());
  call.once('cancelled', onCancelled);
  if (call.cancelled) onCancelled();
  let timer: NodeJS.Timeout | undefined;
  if (deadline) {
    const left = Math.min(MAX_TIMER_MS, Math.max(0, deadline.getTime() - Date.now()));
    timer = setTimeout(() => controller.abort(DEADLINE_PASSED()), left);
    timer.unref();
  }
  return {
    signal: controller.signal,
    release: () => {
      if (timer) clearTimeout(timer);
      call.removeListener('cancelled', onCancelled);
      shutdown?.removeEventListener('abort', onShutdown);
    },
  };
}

/** The status a thrown error is answered with: its kind's code and its message (an internal one is logged). */
function statusOf(e: SscError, method: string, logger: Logger): grpc.ServerErrorResponse {
  if (e.kind === 'internal') {
    try {
      logger.error('internal error', { method, error: describeUnexpected(e.cause ?? e) });
    } catch {
      // A log's failure is not the call's.
    }
  }
  const status: grpc.ServerErrorResponse = {
    name: 'Error',
    message: e.message,
    code: grpcCodeOf(e.kind),
    details: e.message,
  };
  // The wait the failing side asked for travels as gRPC's pushback trailer.
  if (e.retryAfterMs !== undefined) status.metadata = pushbackMetadata(e.retryAfterMs);
  return status;
}

/**
 * Adapts an async handler to grpc-js. grpc-js ignores the promise a handler returns, so a
 * rejection would otherwise crash the process or leave the call hanging; here every
 * outcome ends in exactly one callback, and a thrown error becomes the status of its kind
 * (one table, errors.ts) with its message, which SscErrors keep free of secrets; an
 * unexpected error leaves as INTERNAL with a generic text and is logged. With `calls`,
 * shutdown cancels the call and waits for its cleanup, and refuses calls once begun.
 */
export function unary<Req, Res>(
  method: string,
  handler: AsyncUnaryHandler<Req, Res>,
  logger: Logger,
  observe?: CallObserver,
  calls?: InFlightCalls,
): grpc.handleUnaryCall<Req, Res> {
  // Neither the observer nor the log may keep the call from its one answer.
  const tell = (error: SscError | undefined, started: number): void => {
    try {
      observe?.(method, error, performance.now() - started);
    } catch {
      // A metric's or a log's failure is not the call's.
    }
  };
  return (call, callback) => {
    const started = performance.now();
    const fail = (err: unknown): void => {
      const e = toSscError(err);
      callback(statusOf(e, method, logger));
      tell(e, started);
    };
    if (calls?.signal.aborted) {
      fail(calls.signal.reason);
      return;
    }
    const deadline = deadlineOf(call as grpc.ServerUnaryCall<unknown, unknown>);
    const { signal, release } = callSignal(call as grpc.ServerUnaryCall<unknown, unknown>, deadline, calls?.signal);
    let handled: Promise<Res>;
    try {
      handled = handler(call.request, { signal, deadline });
    } catch (err) {
      // A handler that throws before its first await.
      handled = Promise.reject(err);
    }
    calls?.track(handled);
    handled.then(
      (response) => {
        release();
        callback(null, response);
        tell(undefined, started);
      },
      (err: unknown) => {
        release();
        fail(err);
      },
    );
  };
}

/**
 * What the log says of an error that is not an SscError (a bug): its name and where it was
 * thrown. The message only for the errors of programming mistakes (TypeError, RangeError,
 * ReferenceError); any other message may quote data (JSON.parse's SyntaxError quotes its
 * input), which may be a secret.
 */
function describeUnexpected(err: unknown): string {
  if (!(err instanceof Error)) return `a thrown ${typeof err}`;
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 8)
    .map((l) => l.trim());
  const head =
    err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError
      ? `${err.name}: ${err.message}`
      : err.name;
  return [head, ...frames].join(' | ');
}
