import * as grpc from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { statSync, type Stats } from 'node:fs';
import type { CSIDriverProviderClient } from '../../proto/gen/v1alpha1/CSIDriverProvider.js';
import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import type { VersionResponse__Output } from '../../proto/gen/v1alpha1/VersionResponse.js';
import { isGrpcCallError, kindOfGrpcCode, SscError } from '../../lib/errors.js';
import { providerProto } from '../../lib/grpc/grpc-proto.js';
import { COMMON_CHANNEL_OPTIONS } from '../../lib/grpc/service.js';
import type { Logger } from '../../lib/logging/logger.js';
import { printable } from '../../lib/untrusted-text.js';
import { Pacer } from '../../lib/pacer.js';
import { pushbackOf } from '../../lib/grpc/retry-pushback.js';
import { decodeMountResponse } from './mount-response-decoder.js';
import { candidateSocketPaths } from './socket-path.js';
import type { Sleep } from '../../lib/sleep.js';
import { callWithRetry } from './retry.js';

/** Options of the provider client, from the driver config. */
export interface ProviderClientOptions {
  readonly providerDirs: readonly string[];
  readonly maxCallRecvMsgSize: number;
  /** Most object versions a Mount response may carry (--max-objects-per-volume); unlimited when absent. */
  readonly maxObjectsPerVolume?: number;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly sleep: Sleep;
  /** Attempts for a call that fails UNAVAILABLE (the first try included). */
  readonly maxAttempts?: number;
}

/** Per-call limits given by the caller (kubelet's deadline, cancellation). */
export interface CallLimits {
  readonly deadline?: Date | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Provider codes that keep their meaning for kubelet. Others (UNKNOWN, INTERNAL,
 * UNIMPLEMENTED — e.g. a wrong service on the socket —, OUT_OF_RANGE, DATA_LOSS) become
 * FAILED_PRECONDITION: they are the provider's failures, not this driver's.
 */
const PASSED_THROUGH: ReadonlySet<number> = new Set([
  GrpcStatus.NOT_FOUND,
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.PERMISSION_DENIED,
  GrpcStatus.UNAUTHENTICATED,
  GrpcStatus.ABORTED,
  GrpcStatus.ALREADY_EXISTS,
]);

/**
 * Most of a provider's gRPC error message relayed to kubelet, events and the log: enough
 * for any real explanation, while a provider dumping a whole document stays bounded.
 */
const MAX_DETAILS_SHOWN = 512;

/** How grpc-js (and grpc-go) say a response was over the receive limit. */
const TOO_LARGE = /^Received message (larger than max|that decompresses to a size larger than)/;

/** Time kept back from kubelet's deadline so the driver can still clean up and answer. */
const DEADLINE_MARGIN_MS = 250;

/**
 * How soon a provider that came back after an outage is reached again: grpc-js redials a
 * socket that refused it after a backoff growing from 100 ms to at most 1 s (±20% jitter;
 * grpc-js's defaults, 1 s to 120 s, would leave a restarted provider unreachable for up to
 * two minutes). A provider on a Unix socket costs nothing to redial.
 */
const RECONNECT_OPTIONS: Readonly<grpc.ChannelOptions> = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
});

/**
 * Attempts of a call that fails UNAVAILABLE (the first included): with the retry delays
 * (100, 200, 400, 800 ms) they span longer than the longest reconnect backoff, so the first
 * publish after a provider restarted reaches it, while one that is down fails in ~1.5 s.
 */
const DEFAULT_ATTEMPTS = 5;

/** A call made on a channel: `done` is grpc-js's callback. */
type Invoke<T> = (
  client: CSIDriverProviderClient,
  options: grpc.CallOptions,
  done: (err: grpc.ServiceError | null, res?: T) => void,
) => grpc.ClientUnaryCall;

/**
 * True when a failed call's status came from the server: it carries the server's response
 * headers (a gRPC server always sends content-type), while grpc-js's own statuses for a
 * call that never reached a server (no connection, connection dropped) carry none.
 */
function answeredByServer(err: { readonly metadata?: grpc.Metadata }): boolean {
  return (err.metadata?.get('content-type').length ?? 0) > 0;
}

/**
 * Talks to providers over their Unix sockets through grpc-js: finds
 * `<dir>/<name>.sock` in search order, keeps one channel per socket, puts a deadline on
 * every call, caps the response size and retries a call that could not reach the provider (UNAVAILABLE) a bounded number of times.
 */
export class ProviderClient {
  private readonly clients = new Map<string, CSIDriverProviderClient>();

  constructor(private readonly options: ProviderClientOptions) {}

  /** Calls Mount on provider `name`; errors are SscErrors naming the provider. */
  async mount(name: string, request: MountRequest, limits: CallLimits = {}): Promise<MountResponse__Output> {
    // The response arrives as bytes (grpc-js's per-method deserializer) and is decoded
    // here, pacing the event loop: a response of many files decoded in one go holds it
    // for hundreds of milliseconds.
    const method = providerProto().CSIDriverProvider.service.Mount;
    const raw = await this.call<Buffer>(name, 'Mount', limits, (client, options, done) =>
      client.makeUnaryRequest(method.path, method.requestSerialize, (bytes: Buffer) => bytes, request, options, done),
    );
    try {
      return await decodeMountResponse(raw, new Pacer(), this.options.maxObjectsPerVolume);
    } catch (err) {
      throw err instanceof SscError ? err.withContext(`provider "${name}" Mount`) : err;
    }
  }

  /** Calls Version on provider `name`. */
  async version(name: string, limits: CallLimits = {}): Promise<VersionResponse__Output> {
    return this.call(name, 'Version', limits, (client, options, done) =>
      client.Version({ version: 'v1alpha1' }, options, done),
    );
  }

  /** Closes every cached channel. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private async call<T>(name: string, method: string, limits: CallLimits, invoke: Invoke<T>): Promise<T> {
    const socketPath = this.findSocket(name);
    const deadline = this.deadline(limits.deadline);
    try {
      return await callWithRetry({
        attempts: this.options.maxAttempts ?? DEFAULT_ATTEMPTS,
        deadline,
        sleep: this.options.sleep,
        signal: limits.signal,
        // Only a call that never reached the provider is tried again: one the provider
        // answered UNAVAILABLE (its vault is down or throttles) would only call the vault
        // again; rotation's backoff decides when that is worth it.
        isRetryable: (err) =>
          isGrpcCallError(err) &&
          err.code === GrpcStatus.UNAVAILABLE &&
          !answeredByServer(err as { readonly metadata?: grpc.Metadata }),
        attempt: () =>
          new Promise<T>((resolve, reject) => {
            // The listener must go when the call ends: rotation passes one long-lived signal.
            const onAbort = (): void => call.cancel();
            const call = invoke(this.clientFor(socketPath), { deadline }, (err, res) => {
              limits.signal?.removeEventListener('abort', onAbort);
              if (err) reject(err);
              else resolve(res as T);
            });
            limits.signal?.addEventListener('abort', onAbort, { once: true });
          }),
      });
    } catch (err) {
      if (limits.signal?.aborted) {
        throw new SscError(
          'aborted',
          `provider "${name}" ${method} was cancelled: the caller went away or its deadline passed`,
          { reason: 'Cancelled' },
        );
      }
      throw this.translate(err, name, method, socketPath);
    }
  }

  private deadline(kubeletDeadline: Date | undefined): Date {
    const own = Date.now() + this.options.timeoutMs;
    if (!kubeletDeadline) return new Date(own);
    return new Date(Math.min(own, kubeletDeadline.getTime() - DEADLINE_MARGIN_MS));
  }

  /**
   * The first candidate path that is a socket. Synchronous: a lookup in a local directory
   * the dentry cache holds costs a few µs, a thread-pool trip ~70 µs on every call.
   */
  private findSocket(name: string): string {
    const candidates = candidateSocketPaths(name, this.options.providerDirs);
    for (const path of candidates) {
      if (statOrUndefined(path)?.isSocket()) return path;
    }
    throw new SscError(
      'unavailable',
      `provider "${name}" is not running on this node: no socket at ${candidates.join(' or ')}`,
      { reason: 'ProviderNotFound' },
    );
  }

  /** The channel for a socket, made on first use; grpc-js reconnects it by itself (RECONNECT_OPTIONS). */
  private clientFor(socketPath: string): CSIDriverProviderClient {
    let client = this.clients.get(socketPath);
    if (!client) {
      const Client = providerProto().CSIDriverProvider;
      client = new Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
        ...COMMON_CHANNEL_OPTIONS,
        ...RECONNECT_OPTIONS,
        // What grpc-go sends for a unix: target, and upstream's driver dials with.
        'grpc.default_authority': 'localhost',
        'grpc.max_receive_message_length': this.options.maxCallRecvMsgSize,
        'grpc.max_send_message_length': this.options.maxCallRecvMsgSize,
      });
      this.clients.set(socketPath, client);
    }
    return client;
  }

  private translate(err: unknown, name: string, method: string, socketPath: string): SscError {
    if (err instanceof SscError) return err;
    if (!isGrpcCallError(err))
      return new SscError('internal', `provider "${name}" ${method} failed unexpectedly (a bug)`, { cause: err });
    const where = `provider "${name}" ${method}`;
    // The wait a provider asked for (its backend's Retry-After), for rotation's backoff.
    const retryAfterMs = pushbackOf((err as { readonly metadata?: grpc.Metadata }).metadata);
    switch (err.code) {
      case GrpcStatus.DEADLINE_EXCEEDED:
        return new SscError(
          'deadline-exceeded',
          `${where} did not answer in time (--provider-timeout ${this.options.timeoutMs}ms or the kubelet deadline)`,
          { reason: 'ProviderTimeout' },
        );
      case GrpcStatus.UNAVAILABLE:
        // The provider itself answered (its response headers came back): it runs, and says
        // what it cannot reach; only a call that never reached it is "provider unavailable".
        if (answeredByServer(err as { readonly metadata?: grpc.Metadata })) {
          return new SscError(
            'unavailable',
            `${where} failed (the provider runs; it answered UNAVAILABLE): ${printable(err.details, MAX_DETAILS_SHOWN)}`,
            { reason: 'ProviderBackendUnavailable', retryAfterMs },
          );
        }
        return new SscError(
          'unavailable',
          `${where} unavailable (socket ${socketPath}): ${printable(err.details, MAX_DETAILS_SHOWN)}`,
          { reason: 'ProviderUnavailable' },
        );
      case GrpcStatus.RESOURCE_EXHAUSTED:
        // grpc-js's words for an over-sized response: "Received message larger than max (…)",
        // or "… that decompresses to a size larger than N" for a compressed one.
        if (TOO_LARGE.test(err.details)) {
          return new SscError(
            'resource-exhausted',
            `${where}: response larger than --max-call-recv-msg-size (${this.options.maxCallRecvMsgSize} bytes)`,
            { reason: 'ProviderResponseTooLarge' },
          );
        }
        return new SscError('resource-exhausted', `${where} failed: ${printable(err.details, MAX_DETAILS_SHOWN)}`, {
          reason: 'GRPCProviderError',
          retryAfterMs,
        });
      case GrpcStatus.CANCELLED:
        return new SscError('aborted', `${where} was cancelled`, { reason: 'Cancelled' });
      default: {
        // A provider's own failure (Go providers send plain errors as UNKNOWN) is not a
        // driver bug, so it never leaves as INTERNAL.
        const kind = PASSED_THROUGH.has(err.code) ? kindOfGrpcCode(err.code) : 'failed-precondition';
        return new SscError(kind, `${where} failed: ${printable(err.details, MAX_DETAILS_SHOWN)}`, {
          reason: 'GRPCProviderError',
          retryAfterMs,
        });
      }
    }
  }
}

/** stat(2) of `path`, or undefined when it cannot be had (missing, no permission, not a directory on the way). */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
