// gRPC's server pushback (gRFC A6): a status may carry `grpc-retry-pushback-ms` in its
// trailers, the milliseconds the client should wait before calling again. Providers send
// it when their backend said how long to wait (a vault's 429 with Retry-After); the driver
// honours it in rotation's backoff.
import * as grpc from '@grpc/grpc-js';

/** The trailer's name. */
export const RETRY_PUSHBACK_KEY = 'grpc-retry-pushback-ms';

/** Longest wait a pushback may ask for; longer ones are cut to this (a provider's typo must not stop rotation for days). */
export const MAX_PUSHBACK_MS = 60 * 60 * 1000;

/** The trailer for a wait of `ms` (rounded up to whole milliseconds, at least 0). */
export function pushbackMetadata(ms: number): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(RETRY_PUSHBACK_KEY, String(Math.max(0, Math.ceil(ms))));
  return metadata;
}

/**
 * The wait a status's trailers ask for, in ms, capped at MAX_PUSHBACK_MS; undefined when
 * there is none or it is not a non-negative decimal integer (gRFC A6: such a value means
 * "do not retry" to a retrying client; rotation then keeps its own backoff).
 */
export function pushbackOf(metadata: grpc.Metadata | undefined): number | undefined {
  const values = metadata?.get(RETRY_PUSHBACK_KEY) ?? [];
  if (values.length !== 1) return undefined;
  const text = String(values[0]);
  if (!/^\d{1,12}$/.test(text)) return undefined;
  return Math.min(Number(text), MAX_PUSHBACK_MS);
}
