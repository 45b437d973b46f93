import { statSync, type Stats } from 'node:fs';
import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import type { VersionResponse__Output } from '../../proto/gen/v1alpha1/VersionResponse.js';
import { GrpcStatus } from '../../proto/grpc/status.js';
import { UnaryClient, type CallOptions } from '../../proto/grpc/unary-client.js';
import { isGrpcCallError, kindOfGrpcCode, SscError } from '../../proto/runtime/errors.js';
import { CSI_PROVIDER } from '../../proto/wire/provider.js';
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
const PASSED_THROUGH: ReadonlySet<number> = new Set([GrpcStatus.NOT_FOUND, GrpcStatus.INVALID_ARGUMENT, GrpcStatus.PERMISSION_DENIED, GrpcStatus.UNAUTHENTICATED, GrpcStatus.ABORTED, GrpcStatus.ALREADY_EXISTS]);

/**
 * Most of a provider's gRPC error message relayed to kubelet, events and the log: enough
 * for any real explanation, while a provider dumping a whole document stays bounded.
 */
const MAX_DETAILS_SHOWN = 512;

/** Time kept back from kubelet's deadline so the driver can still clean up and answer. */
const DEADLINE_MARGIN_MS = 250;

/**
 * Talks to providers over their Unix sockets (SPEC 3.2): finds `<dir>/<name>.sock` in
 * search order, keeps one connection per socket (proto/grpc: a lost one is replaced on
 * the next call, with no reconnect backoff — issue 9), puts a deadline on every call,
 * caps the response size and retries UNAVAILABLE a bounded number of times.
 */
export class ProviderClient {
  private readonly clients = new Map<string, UnaryClient>();

  constructor(private readonly options: ProviderClientOptions) {}

  /** Calls Mount on provider `name`; errors are SscErrors naming the provider. */
  async mount(name: string, request: MountRequest, limits: CallLimits = {}): Promise<MountResponse__Output> {
    // The response arrives as bytes and is decoded here, pacing the event loop: decoding a
    // response of many files in one go would hold it for hundreds of milliseconds.
    const method = CSI_PROVIDER.Mount;
    const requestBytes = method.request.encode(request);
    const raw = await this.call(name, 'Mount', limits, (client, options) => client.callRaw(method.path, requestBytes, options));
    try {
      return await decodeMountResponse(raw, new Pacer(), this.options.maxObjectsPerVolume);
    } catch (err) {
      throw err instanceof SscError ? err.withContext(`provider "${name}" Mount`) : err;
    }
  }

  /** Calls Version on provider `name`. */
  async version(name: string, limits: CallLimits = {}): Promise<VersionResponse__Output> {
    const method = CSI_PROVIDER.Version;
    const raw = await this.call(name, 'Version', limits, (client, options) => client.callRaw(method.path, method.request.encode({ version: 'v1alpha1' }), options));
    try {
      return method.response.decode(raw);
    } catch (err) {
      throw new SscError('failed-precondition', `provider "${name}" Version answered with a response that is not a VersionResponse: ${err instanceof Error ? err.message : String(err)}`, { reason: 'GRPCProviderError' });
    }
  }

  /** Closes every cached connection. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  private async call<T>(
    name: string,
    method: string,
    limits: CallLimits,
    invoke: (client: UnaryClient, options: CallOptions) => Promise<T>,
  ): Promise<T> {
    const socketPath = this.findSocket(name);
    const deadline = this.deadline(limits.deadline);
    try {
      return await callWithRetry({
        attempts: this.options.maxAttempts ?? 3,
        deadline,
        sleep: this.options.sleep,
        signal: limits.signal,
        isRetryable: (err) => isGrpcCallError(err) && err.code === GrpcStatus.UNAVAILABLE,
        attempt: () => invoke(this.clientFor(socketPath), { deadline, ...(limits.signal ? { signal: limits.signal } : {}) }),
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

  /**
   * The first candidate path that is a socket. Synchronous: a lookup in a local directory
   * the dentry cache holds costs a few µs, a thread-pool trip ~70 µs on every call.
   */
  private findSocket(name: string): string {
    const candidates = candidateSocketPaths(name, this.options.providerDirs);
    for (const path of candidates) {
      if (statOrUndefined(path)?.isSocket()) return path;
    }
    throw new SscError('unavailable', `provider "${name}" is not running on this node: no socket at ${candidates.join(' or ')}`, { reason: 'ProviderNotFound' });
  }

  /** The connection for a socket, made on first use (UnaryClient reconnects by itself). */
  private clientFor(socketPath: string): UnaryClient {
    let client = this.clients.get(socketPath);
    if (!client) {
      client = new UnaryClient(socketPath, {
        maxReceiveMessageLength: this.options.maxCallRecvMsgSize,
        maxSendMessageLength: this.options.maxCallRecvMsgSize,
      });
      this.clients.set(socketPath, client);
    }
    return client;
  }

  private translate(err: unknown, name: string, method: string, socketPath: string): SscError {
    if (err instanceof SscError) return err;
    if (!isGrpcCallError(err)) return new SscError('internal', `provider "${name}" ${method} failed unexpectedly (a bug)`, { cause: err });
    const where = `provider "${name}" ${method}`;
    switch (err.code) {
      case GrpcStatus.DEADLINE_EXCEEDED:
        return new SscError('deadline-exceeded', `${where} did not answer in time (--provider-timeout ${this.options.timeoutMs}ms or the kubelet deadline)`, { reason: 'ProviderTimeout' });
      case GrpcStatus.UNAVAILABLE:
        return new SscError('unavailable', `${where} unavailable (socket ${socketPath}): ${printable(err.details, MAX_DETAILS_SHOWN)}`, { reason: 'ProviderUnavailable' });
      case GrpcStatus.RESOURCE_EXHAUSTED:
        // proto/grpc (as grpc-go and grpc-js) reports an over-sized response as "Received message larger than max".
        if (/larger than max/i.test(err.details)) {
          return new SscError('resource-exhausted', `${where}: response larger than --max-call-recv-msg-size (${this.options.maxCallRecvMsgSize} bytes)`, { reason: 'ProviderResponseTooLarge' });
        }
        return new SscError('resource-exhausted', `${where} failed: ${printable(err.details, MAX_DETAILS_SHOWN)}`, { reason: 'GRPCProviderError' });
      case GrpcStatus.CANCELLED:
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

/** stat(2) of `path`, or undefined when it cannot be had (missing, no permission, not a directory on the way). */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
