// One unary call on the client side of one HTTP/2 stream: send the request, collect the
// response within the size limit, and end with the response message or a GrpcError. The
// deadline and the caller's signal reset the stream (RST_STREAM CANCEL, as grpc-go); how a
// stream that closed on its own ended is decided by responseOutcome.
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { decompressMessage, messageEncoding } from './compression.js';
import { onDeadline } from './deadline-timer.js';
import { MessageDeframer, type FramingProblem } from './framing.js';
import { headerValue, isGrpcContentType } from './headers.js';
import { shown } from './request-headers.js';
import { responseOutcome } from './response-status.js';
import { GrpcError, GrpcStatus } from './status.js';

/** The HTTP/2 connection a call runs on, and what the client learnt about it. */
export interface Connection {
  readonly session: ClientHttp2Session;
  readonly socketPath: string;
  /** The HTTP/2 connection was established (the 'connect' event). */
  connected: boolean;
  /** The session's error, if it failed (a refused connect, a reset socket). */
  error: Error | undefined;
}

/** Limits and cancellation of one call. */
export interface ClientCallLimits {
  readonly deadline: Date;
  readonly signal?: AbortSignal | undefined;
  readonly maxReceiveMessageLength: number;
}

/** The errno (ENOENT, ECONNREFUSED…) of a socket error, looking through wrapping errors' causes. */
export function errnoOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)) return code;
  }
  return undefined;
}

function framingError(problem: FramingProblem): GrpcError {
  switch (problem.kind) {
    case 'too-large': return new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${problem.length} vs. ${problem.max})`);
    case 'too-many': return new GrpcError(GrpcStatus.INTERNAL, 'cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message');
    case 'bad-flag': return new GrpcError(GrpcStatus.INTERNAL, `grpc: received unexpected payload format ${problem.flag}`);
  }
}

const refused = new WeakSet<GrpcError>();

/**
 * True when the server provably did not process the call: it refused the stream
 * (RST_STREAM REFUSED_STREAM, also what a GOAWAY does to streams past its last id) or the
 * request never left because the session was already closing. Such a call can be sent
 * again on a new connection (gRPC's transparent retry): after a provider restarts, the
 * first call on the old connection otherwise fails although the new one is up.
 */
export function wasRefused(err: unknown): boolean {
  return err instanceof GrpcError && refused.has(err);
}

function markRefused(err: GrpcError): GrpcError {
  refused.add(err);
  return err;
}

/** UNAVAILABLE for a call whose connection failed or went away, naming the socket and the errno. */
function connectionError(conn: Connection, streamError: unknown): GrpcError {
  const errno = errnoOf(streamError) ?? errnoOf(conn.error);
  if (!conn.connected) return new GrpcError(GrpcStatus.UNAVAILABLE, `cannot connect to ${conn.socketPath}: ${errno ?? 'connection closed'}`);
  return new GrpcError(GrpcStatus.UNAVAILABLE, `connection to ${conn.socketPath} closed before the call ended${errno ? `: ${errno}` : ''}`);
}

/** Runs one call on `conn`: resolves with the response message's bytes, rejects only with GrpcError. */
export function runClientCall(conn: Connection, headers: OutgoingHttpHeaders, frame: Buffer, limits: ClientCallLimits): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => new ClientCall(conn, limits, resolve, reject).start(headers, frame));
}

/** One call's stream and what arrived on it, until it settles once. */
class ClientCall {
  private readonly deframer: MessageDeframer;
  private stream: ClientHttp2Stream | undefined;
  private responseHeaders: IncomingHttpHeaders | undefined;
  private trailers: IncomingHttpHeaders | undefined;
  private streamError: unknown;
  private settled = false;
  private stopTimer: () => void = () => {};
  private readonly onAbort = (): void => this.cancel(new GrpcError(GrpcStatus.CANCELLED, 'Cancelled on client'));

  constructor(private readonly conn: Connection, private readonly limits: ClientCallLimits, private readonly resolve: (message: Buffer) => void, private readonly reject: (err: GrpcError) => void) {
    this.deframer = new MessageDeframer(limits.maxReceiveMessageLength, 1);
  }

  start(headers: OutgoingHttpHeaders, frame: Buffer): void {
    let stream: ClientHttp2Stream;
    try {
      stream = this.conn.session.request(headers);
    } catch (err) {
      // Nothing was sent: the session was closing or gone.
      this.finish(markRefused(connectionError(this.conn, err)));
      return;
    }
    this.stream = stream;
    this.stopTimer = onDeadline(this.limits.deadline.getTime(), () => this.cancel(new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded')));
    this.limits.signal?.addEventListener('abort', this.onAbort, { once: true });
    stream.on('error', (err) => { this.streamError = err; });
    stream.on('response', (h, flags) => {
      this.responseHeaders = h;
      if (flags & constants.NGHTTP2_FLAG_END_STREAM) this.trailers = h;
    });
    stream.on('trailers', (t) => { this.trailers = t; });
    stream.on('data', (chunk: Buffer) => this.received(chunk));
    stream.on('close', () => this.closed(stream));
    stream.end(frame);
  }

  /** Ends the call with `err` and resets the stream (RST_STREAM CANCEL): the deadline, the caller's signal, a bad response. */
  private cancel(err: GrpcError): void {
    if (this.stream && !this.stream.destroyed) this.stream.close(constants.NGHTTP2_CANCEL);
    this.finish(err);
  }

  private received(chunk: Buffer): void {
    if (this.settled || !isGrpcContentType(headerValue(this.responseHeaders?.['content-type']))) return;
    const problem = this.deframer.push(chunk);
    if (problem) this.cancel(framingError(problem));
  }

  private closed(stream: ClientHttp2Stream): void {
    if (this.settled) return;
    const { responseHeaders, trailers } = this;
    if (!trailers && (this.conn.session.destroyed || !this.conn.connected)) {
      this.finish(connectionError(this.conn, this.streamError));
      return;
    }
    const outcome = responseOutcome({
      headers: responseHeaders && { httpStatus: Number(responseHeaders[':status']) || undefined, contentType: headerValue(responseHeaders['content-type']) },
      trailers: trailers && { status: headerValue(trailers['grpc-status']), message: headerValue(trailers['grpc-message']) },
      messages: this.deframer.messages.length,
      pendingBytes: this.deframer.pendingBytes,
      // A stream that ended normally closes with NO_ERROR; Node emits 'end' after a reset too.
      rstCode: stream.rstCode === constants.NGHTTP2_NO_ERROR ? undefined : stream.rstCode,
    });
    if (outcome) {
      this.finish(!responseHeaders && stream.rstCode === constants.NGHTTP2_REFUSED_STREAM ? markRefused(outcome) : outcome);
      return;
    }
    const message = this.deframer.messages[0] as { compressed: boolean; bytes: Buffer };
    if (!message.compressed) { this.finish(undefined, message.bytes); return; }
    const encodingHeader = headerValue(responseHeaders?.['grpc-encoding']);
    const encoding = messageEncoding(encodingHeader);
    if (!encoding) {
      this.finish(new GrpcError(GrpcStatus.INTERNAL, `grpc: Decompressor is not installed for grpc-encoding "${shown(encodingHeader ?? '')}"`));
      return;
    }
    decompressMessage(encoding, message.bytes, this.limits.maxReceiveMessageLength).then((bytes) => this.finish(undefined, bytes), (err: GrpcError) => this.finish(err));
  }

  private finish(err: GrpcError | undefined, message?: Buffer): void {
    if (this.settled) return;
    this.settled = true;
    this.stopTimer();
    this.limits.signal?.removeEventListener('abort', this.onAbort);
    if (err) this.reject(err); else this.resolve(message as Buffer);
  }
}
