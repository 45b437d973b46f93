import type * as grpc from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
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

function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): Date | undefined {
  const d = call.getDeadline();
  if (d instanceof Date) return d;
  if (typeof d === 'number' && Number.isFinite(d)) return new Date(d);
  return undefined;
}

/**
 * Adapts an async handler to grpc-js. grpc-js ignores the promise a handler returns, so a
 * rejection would otherwise crash the process or leave the call hanging; here every
 * outcome ends in exactly one callback, and thrown errors become gRPC statuses by kind.
 * With `calls`, shutdown can cancel the call and wait for it, and refuses calls once begun.
 */
export function unary<Req, Res>(
  method: string,
  handler: AsyncUnaryHandler<Req, Res>,
  logger: Logger,
  observe?: CallObserver,
  calls?: InFlightCalls,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = performance.now();
    if (calls?.signal.aborted) {
      const e = toSscError(calls.signal.reason);
      observe?.(method, e, 0);
      callback({ code: grpcCodeOf(e.kind), details: e.message, metadata: new Metadata() });
      return;
    }
    const controller = new AbortController();
    const deadline = deadlineOf(call as grpc.ServerUnaryCall<unknown, unknown>);
    let timer: NodeJS.Timeout | undefined;
    if (deadline) {
      // setTimeout fires at once for delays over 2^31-1 ms: clamp far-off deadlines.
      timer = setTimeout(() => controller.abort(new Error('deadline exceeded')), Math.min(2 ** 31 - 1, Math.max(0, deadline.getTime() - Date.now())));
      timer.unref();
    }
    call.on('cancelled', () => controller.abort(new Error('cancelled by client')));
    // A listener removed when the call ends, not AbortSignal.any: the shutdown signal lives
    // as long as the process, and every call would leave something attached to it.
    const onShutdown = () => controller.abort(calls?.signal.reason);
    calls?.signal.addEventListener('abort', onShutdown, { once: true });
    const handled = handler(call.request, { signal: controller.signal, deadline });
    calls?.track(handled);
    handled
      .then((response) => {
        observe?.(method, undefined, performance.now() - started);
        callback(null, response);
      }, (err: unknown) => {
        const e = toSscError(err);
        if (e.kind === 'internal') logger.error('internal error', { method, error: String(e.cause ?? e.message) });
        observe?.(method, e, performance.now() - started);
        callback({ code: grpcCodeOf(e.kind), details: e.message, metadata: new Metadata() });
      })
      .finally(() => {
        if (timer) clearTimeout(timer);
        calls?.signal.removeEventListener('abort', onShutdown);
      });
  };
}
