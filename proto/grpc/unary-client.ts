// A unary-only gRPC client on node:http2 for one Unix socket (a provider's, or a driver's
// for the CLI and tests). It replaces grpc-js channels (issue 15), and with them their
// reconnect backoff, which failed calls for seconds after a provider came back (issue 9):
// a session that closed, failed or got GOAWAY is simply replaced on the next call.
import { connect, type OutgoingHttpHeaders } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { runClientCall, wasRefused, type Connection } from './client-call.js';
import { frameMessage } from './framing.js';
import { ACCEPTED_ENCODINGS, GRPC_CONTENT_TYPE } from './headers.js';
import type { UnaryMethod } from './method.js';
import { GrpcError, GrpcStatus } from './status.js';
import { formatGrpcTimeout } from './timeout.js';

/** Options of a UnaryClient. */
export interface UnaryClientOptions {
  /** Largest response message accepted, compressed or decompressed (default 4 MiB, as grpc-go and grpc-js). */
  readonly maxReceiveMessageLength?: number;
  /** Largest request message sent (default: no limit, as grpc-go and grpc-js). */
  readonly maxSendMessageLength?: number;
  /** The :authority header (default "localhost", what grpc-go sends for a unix: target). */
  readonly authority?: string;
  /** The user-agent header (default "secrets-store-csi-grpc"). */
  readonly userAgent?: string;
}

/** A call's deadline (required: every call ends) and optional cancellation. */
export interface CallOptions {
  readonly deadline: Date;
  readonly signal?: AbortSignal;
}

const DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024;

/** Live connection plus the number of calls on it, which decides whether it keeps the process alive. */
interface TrackedConnection extends Connection {
  calls: number;
}

/** A gRPC client of unary methods on one Unix socket, one HTTP/2 connection at a time, opened on first use. */
export class UnaryClient {
  private readonly maxReceiveMessageLength: number;
  private readonly maxSendMessageLength: number;
  private readonly authority: string;
  private readonly userAgent: string;
  private current: TrackedConnection | undefined;
  private closed = false;

  constructor(private readonly socketPath: string, options: UnaryClientOptions = {}) {
    this.maxReceiveMessageLength = options.maxReceiveMessageLength ?? DEFAULT_MAX_RECEIVE;
    this.maxSendMessageLength = options.maxSendMessageLength ?? Infinity;
    this.authority = options.authority ?? 'localhost';
    this.userAgent = options.userAgent ?? 'secrets-store-csi-grpc';
  }

  /** Calls `method` with `request`; rejects only with GrpcError (transport failures included). */
  async call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, options: CallOptions): Promise<Res> {
    let bytes: Uint8Array;
    try {
      bytes = method.request.encode(request);
    } catch {
      throw new GrpcError(GrpcStatus.INTERNAL, `could not serialize the ${method.path} request message`);
    }
    const response = await this.callRaw(method.path, bytes, options);
    try {
      return method.response.decode(response);
    } catch {
      // Never the decoder's message: it may quote the response's bytes (secrets).
      throw new GrpcError(GrpcStatus.INTERNAL, `could not parse the ${method.path} response message`);
    }
  }

  /** Calls the method at `path` with an encoded request; resolves with the response message's bytes. Rejects only with GrpcError. */
  async callRaw(path: string, requestBytes: Uint8Array, options: CallOptions): Promise<Uint8Array> {
    if (this.closed) throw new GrpcError(GrpcStatus.CANCELLED, 'the client was closed');
    if (requestBytes.length > this.maxSendMessageLength) {
      throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${requestBytes.length} vs. ${this.maxSendMessageLength})`);
    }
    if (options.signal?.aborted) throw new GrpcError(GrpcStatus.CANCELLED, 'Cancelled on client');
    const frame = frameMessage(requestBytes);
    try {
      return await this.attempt(path, frame, options);
    } catch (err) {
      if (!wasRefused(err) || this.closed) throw err;
      return this.attempt(path, frame, options);
    }
  }

  /** Closes the connection once the calls in flight have ended; later calls fail with CANCELLED. */
  close(): void {
    this.closed = true;
    this.current?.session.close();
    this.current = undefined;
  }

  private async attempt(path: string, frame: Buffer, options: CallOptions): Promise<Buffer> {
    const left = options.deadline.getTime() - Date.now();
    if (!(left > 0)) throw new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
    const headers: OutgoingHttpHeaders = {
      ':method': 'POST',
      ':scheme': 'http',
      ':path': path,
      ':authority': this.authority,
      'grpc-timeout': formatGrpcTimeout(left),
      'content-type': GRPC_CONTENT_TYPE,
      'te': 'trailers',
      'user-agent': this.userAgent,
      'grpc-accept-encoding': ACCEPTED_ENCODINGS,
    };
    const conn = this.connection();
    // A call in flight keeps the process alive; an idle connection does not.
    if (conn.calls++ === 0) conn.session.ref();
    try {
      return await runClientCall(conn, headers, frame, {
        deadline: options.deadline, signal: options.signal, maxReceiveMessageLength: this.maxReceiveMessageLength,
      });
    } catch (err) {
      // A refused call means this connection is going away: the retry needs a new one.
      if (wasRefused(err) && this.current === conn) this.current = undefined;
      throw err;
    } finally {
      if (--conn.calls === 0 && !conn.session.destroyed) conn.session.unref();
    }
  }

  private connection(): TrackedConnection {
    const live = this.current;
    if (live && !live.session.closed && !live.session.destroyed) return live;
    // The URL only says h2c; the :authority header is set per request.
    const session = connect('http://localhost', {
      createConnection: () => netConnect(this.socketPath),
      settings: { enablePush: false },
    });
    const conn: TrackedConnection = { session, socketPath: this.socketPath, connected: false, error: undefined, calls: 0 };
    const retire = (): void => {
      if (this.current === conn) this.current = undefined;
    };
    session.once('connect', () => { conn.connected = true; });
    // Without an 'error' listener a refused connect would crash the process.
    session.on('error', (err) => { conn.error = err; retire(); });
    session.on('goaway', () => { retire(); session.close(); });
    session.once('close', retire);
    session.unref();
    this.current = conn;
    return conn;
  }
}
