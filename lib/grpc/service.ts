import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../logging/logger.js';

/**
 * Channel options every server and client of this project shares. Channelz (grpc-js's
 * introspection service, on by default) keeps per-call statistics nobody reads here:
 * this project never serves the channelz service.
 */
export const COMMON_CHANNEL_OPTIONS: Readonly<grpc.ChannelOptions> = Object.freeze({ 'grpc.enable_channelz': 0 });

/**
 * The gRPC server of the driver and of every provider: requests up to grpc-js's default
 * 4 MiB. Unregistered methods of a registered service answer UNIMPLEMENTED (grpc-js's own
 * handler), unknown services too.
 */
export function createGrpcServer(): grpc.Server {
  return new grpc.Server({ ...COMMON_CHANNEL_OPTIONS });
}

/**
 * Sends what grpc-js logs (connection problems a peer caused; more with GRPC_VERBOSITY and
 * GRPC_TRACE, which grpc-js reads from the environment) to the process's JSON log instead
 * of grpc-js's plain text on stderr. grpc-js has one logger per process; its lines name
 * connections, states and methods, never message contents. Each at its own level: grpc-js's
 * traces are debug lines, shown with --log-level=debug.
 */
export function routeGrpcLogs(logger: Logger): void {
  const at =
    (level: 'error' | 'info' | 'debug') =>
    (...args: unknown[]): void =>
      logger[level]('gRPC', { detail: args.map(String).join(' ') });
  grpc.setLogger({ error: at('error'), info: at('info'), debug: at('debug') } as unknown as Partial<Console>);
}
