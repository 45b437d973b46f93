import type * as grpc from '@grpc/grpc-js';
import { grpcCodeOf, toSscError, type SscError } from './errors.js';
import type { InFlightCalls } from './in-flight.js';
import type { Logger } from './logger.js';

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

/**
 * An abort signal for one call: aborted when the client cancels (grpc-js's 'cancelled',
 * also emitted when the client's deadline passes), when the deadline passes by the server's
 * own clock, or when `shutdown` aborts. `release` detaches it from the long-lived shutdown
 * signal and clears the timer; a listener removed per call rather than AbortSignal.any,
 * which would leave something attached to the shutdown signal for every call.
 */
function callSignal(
  call: grpc.ServerUnaryCall<unknown, unknown>,
  deadline: Date | undefined,
  shutdown: AbortSignal | undefined,
): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onShutdown = (): void => controller.abort(shutdown?.reason);
  shutdown?.addEventListener('abort', onShutdown, { once: true });
  call.once('cancelled', () => controller.abort(new Error('cancelled by the client')));
  if (call.cancelled) controller.abort(new Error('cancelled by the client'));
  let timer: NodeJS.Timeout | undefined;
  if (deadline) {
    const left = Math.min(MAX_TIMER_MS, Math.max(0, deadline.getTime() - Date.now()));
    timer = setTimeout(() => controller.abort(new Error('deadline exceeded')), left);
    timer.unref();
  }
  return {
    signal: controller.signal,
    release: () => {
      if (timer) clearTimeout(timer);
      shutdown?.removeEventListener('abort', onShutdown);
    },
  };
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
  const fail = (err: unknown, started: number): grpc.ServerErrorResponse => {
    const e = toSscError(err);
    if (e.kind === 'internal') logger.error('internal error', { method, error: String(e.cause ?? e.message) });
    observe?.(method, e, performance.now() - started);
    return { name: 'Error', message: e.message, code: grpcCodeOf(e.kind), details: e.message };
  };
  return (call, callback) => {
    const started = performance.now();
    if (calls?.signal.aborted) {
      callback(fail(calls.signal.reason, started));
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
        observe?.(method, undefined, performance.now() - started);
        callback(null, response);
      },
      (err: unknown) => {
        release();
        callback(fail(err, started));
      },
    );
  };
}
