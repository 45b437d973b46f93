import { GrpcError } from '../grpc/status.js';
import type { CallContext, UnaryHandler } from '../grpc/unary-server.js';
import { grpcCodeOf, toSscError, type SscError } from './errors.js';
import type { InFlightCalls } from './in-flight.js';
import type { Logger } from './logger.js';

export type { CallContext } from '../grpc/unary-server.js';

/** An async unary handler: returns the response or throws (an SscError, ideally). */
export type AsyncUnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/** Called once per finished call: for metrics and logs. */
export type CallObserver = (method: string, error: SscError | undefined, durationMs: number) => void;

/** A call context whose signal aborts with the call's or with `shutdown`, whichever first; `unlink` detaches both listeners. */
function linkedToShutdown(call: CallContext, shutdown: AbortSignal): { ctx: CallContext; unlink: () => void } {
  const controller = new AbortController();
  const onCallAbort = () => controller.abort(call.signal.reason);
  const onShutdown = () => controller.abort(shutdown.reason);
  if (call.signal.aborted) onCallAbort();
  else call.signal.addEventListener('abort', onCallAbort, { once: true });
  shutdown.addEventListener('abort', onShutdown, { once: true });
  return {
    ctx: { signal: controller.signal, deadline: call.deadline },
    unlink: () => { call.signal.removeEventListener('abort', onCallAbort); shutdown.removeEventListener('abort', onShutdown); },
  };
}

/**
 * Adapts a handler to the gRPC server: every thrown error becomes a status by its kind
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
): UnaryHandler<Req, Res> {
  const fail = (err: unknown, started: number): GrpcError => {
    const e = toSscError(err);
    if (e.kind === 'internal') logger.error('internal error', { method, error: String(e.cause ?? e.message) });
    observe?.(method, e, performance.now() - started);
    return new GrpcError(grpcCodeOf(e.kind), e.message);
  };
  return async (request, call) => {
    const started = performance.now();
    if (calls?.signal.aborted) throw fail(calls.signal.reason, started);
    // With `calls`, the handler's signal also aborts on shutdown. A listener removed when
    // the call ends, not AbortSignal.any: the shutdown signal lives as long as the
    // process, and every call would leave something attached to it.
    const linked = calls ? linkedToShutdown(call, calls.signal) : { ctx: call, unlink: () => undefined };
    const handled = handler(request, linked.ctx);
    calls?.track(handled);
    try {
      const response = await handled;
      observe?.(method, undefined, performance.now() - started);
      return response;
    } catch (err) {
      throw fail(err, started);
    } finally {
      linked.unlink();
    }
  };
}
