import * as grpc from '@grpc/grpc-js';
import type { Logger } from './logger.js';

/** gRPC's default message size limit (grpc-go, grpc-js): 4 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Channel options every server and client of this project shares. Channelz (grpc-js's
 * introspection service, on by default) keeps per-call statistics nobody reads here:
 * this project never serves the channelz service.
 */
export const COMMON_CHANNEL_OPTIONS: Readonly<grpc.ChannelOptions> = Object.freeze({ 'grpc.enable_channelz': 0 });

/**
 * The gRPC server of the driver and of every provider: requests up to
 * `maxReceiveMessageLength` bytes (default 4 MiB). Unregistered methods of a registered
 * service answer UNIMPLEMENTED (grpc-js's own handler), unknown services too.
 */
export function createGrpcServer(options: { maxReceiveMessageLength?: number } = {}): grpc.Server {
  return new grpc.Server({
    ...COMMON_CHANNEL_OPTIONS,
    'grpc.max_receive_message_length': options.maxReceiveMessageLength ?? DEFAULT_MAX_MESSAGE_BYTES,
  });
}

/**
 * Sends what grpc-js logs (connection problems a peer caused; more with GRPC_VERBOSITY and
 * GRPC_TRACE, which grpc-js reads from the environment) to the process's JSON log instead
 * of grpc-js's plain text on stderr. grpc-js has one logger per process; its lines name
 * connections, states and methods, never message contents.
 */
export function routeGrpcLogs(logger: Logger): void {
  const write = (...args: unknown[]): void => logger.warn('gRPC', { detail: args.map(String).join(' ') });
  grpc.setLogger({ error: write, warn: write, info: write, debug: write } as unknown as Partial<Console>);
}
