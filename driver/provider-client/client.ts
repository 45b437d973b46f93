import * as grpc from '@grpc/grpc-js';
import { stat } from 'node:fs/promises';
import type { CSIDriverProviderClient } from '../../proto/gen/v1alpha1/CSIDriverProvider.js';
import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import type { VersionResponse__Output } from '../../proto/gen/v1alpha1/VersionResponse.js';
import { isGrpcCallError, kindOfGrpcCode, SscError } from '../../proto/runtime/errors.js';
import { loadProviderProto } from '../../proto/runtime/loader.js';
import type { Logger } from '../../proto/runtime/logger.js';
import { printable } from '../../proto/runtime/untrusted-text.js';
import { Pacer } from '../../proto/runtime/pacer.js';
import { decodeMountResponse } from './mount-response-decoder.js';
import { candidateSocketPaths } from './socket-path.js';
import { callWithRetry, type Sleep } from './retry.js';

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
const PASSED_THROUGH: ReadonlySet<number> = new Set([grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT, grpc.status.PERMISSION_DENIED, grpc.status.UNAUTHENTICATED, grpc.status.ABORTED, grpc.status.ALREADY_EXISTS]);

/** True when a channel is in TRANSIENT_FAILURE: its last connect failed and it waits out a backoff. */
function isBackingOff(client: grpc.Client): boolean {
  return client.getChannel().getConnectivityState(false) === grpc.connectivityState.TRANSIENT_FAILURE;
}

/**
 * Most of a provider's gRPC error message relayed to kubelet, events and the log: enough
 * for any real explanation, while a provider dumping a whole document stays bounded.
 */
const MAX_DETAILS_SHOWN = 512;

/** Time kept back from kubelet's deadline so the driver can still clean up and answer. */
const DEADLINE_MARGIN_MS = 250;

/**
 * Talks to providers over their Unix sockets (SPEC 3.2): finds `<dir>/<name>.sock` in
 * search order, keeps one channel per socket, puts a deadline on every call, caps the
 * response size and retries UNAVAILABLE a bounded number of times.
 */
export class ProviderClient {
  private readonly clients = new Map<string, CSIDriverProviderClient>();

  constructor(private readonly options: ProviderClientOptions) {}

  /** Calls Mount on provider `name`; errors are SscErrors naming the provider. */
  async mount(name: string, request: MountRequest, limits: CallLimits = {}): Promise<MountResponse__Output> {
    // The response arrives as bytes and is decoded here, pacing the event loop: grpc-js's
    // own decoder holds it for hundreds of milliseconds on a response of many files.
    const method = loadProviderProto().v1alpha1.CSIDriverProvider.service.Mount;
    const raw = await this.call<Buffer>(name, 'Mount', limits, (client, deadline, done) =>
      client.makeUnaryRequest(method.path, method.requestSerialize, (bytes: Buffer) => bytes, request, { deadline }, done));
    try {
      return await decodeMountResponse(raw, new Pacer(), this.options.maxObjectsPerVolume);
    } catch (err) {
      throw err instanceof SscError ? err.withContext(`provider "${name}" Mount`) : err;
    }
  }

  /** Calls Version on provider `name`. */
  async version(name: string, limits: CallLimits = {}): Promise<VersionResponse__Output> {
    return this.call(name, 'Version', limits, (client, deadline, done) => client.Version({ version: 'v1alpha1' }, { deadline }, done));
  }

  /** Closes every cached channel. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private async call<T>(
    name: string,
    method: string,
    limits: CallLimits,
    invoke: (client: CSIDriverProviderClient, deadline: Date, done: (err: grpc.ServiceError | null, res?: T) => void) => grpc.ClientUnaryCall,
  ): Promise<T> {
    const socketPath = await this.findSocket(name);
    const deadline = this.deadline(limits.deadline);
    try {
      return await callWithRetry({
        attempts: this.options.maxAttempts ?? 3,
        deadline,
        sleep: this.options.sleep,
        signal: limits.signal,
        isRetryable: (err) => isGrpcCallError(err) && err.code === grpc.status.UNAVAILABLE,
        attempt: () => new Promise<T>((resolve, reject) => {
          // The listener must go when the call ends: rotation passes one long-lived signal.
          const onAbort = () => call.cancel();
          const call = invoke(this.clientFor(socketPath), deadline, (err, res) => {
            limits.signal?.removeEventListener('abort', onAbort);
            if (err) reject(err); else resolve(res as T);
          });
          limits.signal?.addEventListener('abort', onAbort, { once: true });
        }),
      });
    } catch (err) {
      if (limits.signal?.aborted) {
        throw new SscError('aborted', `provider "${name}" ${method} was cancelled: the caller went away or its deadline passed`, { reason: 'Cancelled' });
      }
      throw this.translate(err, name, method, socketPath);
    }
  }

  private deadline(kubeletDeadline: Date | undefined): Date {
    const own = Date.now() + this.options.timeoutMs;
    if (!kubeletDeadline) return new Date(own);
    return new Date(Math.min(own, kubeletDeadline.getTime() - DEADLINE_MARGIN_MS));
  }

  private async findSocket(name: string): Promise<string> {
    const candidates = candidateSocketPaths(name, this.options.providerDirs);
    for (const path of candidates) {
      const s = await stat(path).catch(() => undefined);
      if (s?.isSocket()) return path;
    }
    throw new SscError('unavailable', `provider "${name}" is not running on this node: no socket at ${candidates.join(' or ')}`, { reason: 'ProviderNotFound' });
  }

  /**
   * The cached channel for a socket, replaced by a fresh one when it sits in grpc-js's
   * reconnect backoff (TRANSIENT_FAILURE): after a provider outage that backoff grows to
   * many seconds, during which every call fails at once although the provider is back
   * (issue 9). A fresh channel dials now; on a Unix socket that costs next to nothing.
   * No call waits on a channel in TRANSIENT_FAILURE (none uses wait-for-ready), so
   * closing it fails nothing in flight.
   */
  private clientFor(socketPath: string): CSIDriverProviderClient {
    const cached = this.clients.get(socketPath);
    if (cached && !isBackingOff(cached)) return cached;
    cached?.close();
    const Ctor = loadProviderProto().v1alpha1.CSIDriverProvider;
    const client = new Ctor(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
      'grpc.default_authority': 'localhost',
      'grpc.max_receive_message_length': this.options.maxCallRecvMsgSize,
      'grpc.max_send_message_length': this.options.maxCallRecvMsgSize,
      // grpc-js shares subchannels (and their backoff) between channels to one address
      // unless each channel has its own pool: a fresh channel must not inherit the backoff.
      'grpc.use_local_subchannel_pool': 1,
    });
    this.clients.set(socketPath, client);
    return client;
  }

  private translate(err: unknown, name: string, method: string, socketPath: string): SscError {
    if (err instanceof SscError) return err;
    if (!isGrpcCallError(err)) return new SscError('internal', `provider "${name}" ${method} failed unexpectedly (a bug)`, { cause: err });
    const where = `provider "${name}" ${method}`;
    switch (err.code) {
      case grpc.status.DEADLINE_EXCEEDED:
        return new SscError('deadline-exceeded', `${where} did not answer in time (--provider-timeout ${this.options.timeoutMs}ms or the kubelet deadline)`, { reason: 'ProviderTimeout' });
      case grpc.status.UNAVAILABLE:
        return new SscError('unavailable', `${where} unavailable (socket ${socketPath}): ${printable(err.details, MAX_DETAILS_SHOWN)}`, { reason: 'ProviderUnavailable' });
      case grpc.status.RESOURCE_EXHAUSTED:
        // grpc-js reports an over-sized response as "Received message larger than max".
        if (/larger than max/i.test(err.details)) {
          return new SscError('resource-exhausted', `${where}: response larger than --max-call-recv-msg-size (${this.options.maxCallRecvMsgSize} bytes)`, { reason: 'ProviderResponseTooLarge' });
        }
        return new SscError('resource-exhausted', `${where} failed: ${printable(err.details, MAX_DETAILS_SHOWN)}`, { reason: 'GRPCProviderError' });
      case grpc.status.CANCELLED:
        return new SscError('aborted', `${where} was cancelled`, { reason: 'Cancelled' });
      default: {
        // A provider's own failure (Go providers send plain errors as UNKNOWN) is not a
        // driver bug, so it never leaves as INTERNAL.
        const kind = PASSED_THROUGH.has(err.code) ? kindOfGrpcCode(err.code) : 'failed-precondition';
        return new SscError(kind, `${where} failed: ${printable(err.details, MAX_DETAILS_SHOWN)}`, { reason: 'GRPCProviderError' });
      }
    }
  }
}
