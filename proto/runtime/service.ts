import { UnaryServer, type UnaryHandler } from '../grpc/unary-server.js';
import type { Logger } from './logger.js';
import type { WireMethod } from '../wire/codec.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- type-level extraction only */
type AnyMethod = WireMethod<any, any, any, any>;

/** The decoded request type a server gets for a method. */
export type ServedRequest<M> = M extends WireMethod<any, infer ReqOut, any, any> ? ReqOut : never;
/** The response type a server answers a method with. */
export type ServedResponse<M> = M extends WireMethod<any, any, infer ResIn, any> ? ResIn : never;

/** One handler per method of a service's method table (proto/wire's CSI_NODE, CSI_PROVIDER …). */
export type ServiceHandlers<T extends Record<string, AnyMethod>> = {
  readonly [K in keyof T]: UnaryHandler<ServedRequest<T[K]>, ServedResponse<T[K]>>;
};

/** Serves every method of `methods` on `server` with its handler from `handlers`. */
export function addService<T extends Record<string, AnyMethod>>(server: UnaryServer, methods: T, handlers: Partial<ServiceHandlers<T>>): void {
  for (const name of Object.keys(handlers) as (keyof T & string)[]) {
    const method = methods[name];
    const handler = handlers[name];
    if (!method || !handler) throw new Error(`${name} is not a method of this service`);
    server.add(method, handler);
  }
}

/**
 * The gRPC server of the driver and of every provider: proto/grpc's defaults (4 MiB
 * requests), its connection problems logged as warnings (never with request contents).
 */
export function createLoggedServer(logger: Logger): UnaryServer {
  return new UnaryServer({ onError: (what, err) => logger.warn('gRPC connection problem', { what, error: err instanceof Error ? err.message : String(err) }) });
}
