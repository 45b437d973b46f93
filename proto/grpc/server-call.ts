// One unary call on the server side of one HTTP/2 stream: read exactly one request message
// within the size limit, decompress and decode it, run the handler with the call's
// deadline and cancellation, answer with one message and an OK status or with an error
// status (Trailers-Only). Whatever the client does (reset, vanish, send garbage) ends here,
// never in the process: every stream event is handled and every step checks the stream.
import { constants, type ServerHttp2Stream } from 'node:http2';
import { decompressMessage } from './compression.js';
import { onDeadline } from './deadline-timer.js';
import { frameMessage, MessageDeframer, type FramingProblem } from './framing.js';
import { ACCEPTED_ENCODINGS, GRPC_CONTENT_TYPE } from './headers.js';
import { encodeGrpcMessage } from './message-text.js';
import type { AcceptedRequest } from './request-headers.js';
import { GrpcError, GrpcStatus, type GrpcStatusCode } from './status.js';

/** What a handler gets besides its request: cancellation (client gone, deadline passed, shutdown) and the client's deadline. */
export interface CallContext {
  readonly signal: AbortSignal;
  readonly deadline: Date | undefined;
}

/** A served method with its types erased: how the server decodes, runs and encodes one call. */
export interface Route {
  readonly path: string;
  decode(bytes: Uint8Array): unknown;
  encode(response: unknown): Uint8Array;
  handle(request: unknown, ctx: CallContext): Promise<unknown>;
}

/** Server-wide settings a call needs. */
export interface ServerCallOptions {
  readonly maxReceiveMessageLength: number;
  /** Told about failures worth a log line; never given request contents. */
  readonly onError: (what: string, err: unknown) => void;
}

/**
 * Answers `stream` with an error status at once, before reading the request (HTTP status
 * other than 200 for a request that is not gRPC). A client still sending gets RST_STREAM
 * NO_ERROR after the status (PROTOCOL-HTTP2.md, Early Server Closure).
 */
export function answerWithStatus(stream: ServerHttp2Stream, code: GrpcStatusCode, message: string, httpStatus = 200): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  const headers: Record<string, string | number> = { ':status': httpStatus, 'content-type': GRPC_CONTENT_TYPE, 'grpc-status': String(code) };
  if (message !== '') headers['grpc-message'] = encodeGrpcMessage(message);
  try {
    stream.respond(headers, { endStream: true });
    if (!stream.readableEnded) stream.close(constants.NGHTTP2_NO_ERROR);
  } catch {
    // The stream went away between the check and the answer: nobody is left to tell.
  }
}

function framingStatus(problem: FramingProblem): GrpcError {
  switch (problem.kind) {
    case 'too-large': return new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${problem.length} vs. ${problem.max})`);
    case 'too-many': return new GrpcError(GrpcStatus.INTERNAL, 'cardinality violation: received multiple request messages for non-client-streaming RPC');
    case 'bad-flag': return new GrpcError(GrpcStatus.INTERNAL, `grpc: received unexpected payload format ${problem.flag}`);
  }
}

/** A handler's rejection as the status to answer: a GrpcError as it is, anything else generic (its message may hold secrets). */
function handlerStatus(err: unknown, path: string, onError: ServerCallOptions['onError']): GrpcError {
  if (err instanceof GrpcError && Number.isInteger(err.code) && err.code > 0) return err;
  onError(`handler of ${path} failed`, err);
  return new GrpcError(GrpcStatus.INTERNAL, `the server failed while handling ${path}`);
}

/** One accepted call; `ended` settles once its stream has closed and its handler (if started) has settled. */
export class ServerCall {
  readonly ended: Promise<void>;
  private readonly abort = new AbortController();
  private readonly deframer: MessageDeframer;
  private readonly deadline: Date | undefined;
  private cancelTimer: () => void = () => {};
  private reading = true;
  private answered = false;
  private handlerDone: Promise<void> = Promise.resolve();
  private handlerRunning = false;

  constructor(private readonly stream: ServerHttp2Stream, private readonly route: Route, private readonly request: AcceptedRequest, private readonly options: ServerCallOptions) {
    this.deframer = new MessageDeframer(options.maxReceiveMessageLength, 1);
    this.deadline = request.timeoutMs === undefined ? undefined : new Date(Date.now() + request.timeoutMs);
    const closed = new Promise<void>((resolve) => stream.once('close', resolve));
    this.ended = closed.then(() => this.handlerDone);
    stream.once('close', () => this.streamClosed());
    // A reset with an error code or a broken connection (a client's RST_STREAM CANCEL
    // errs nothing: that is a plain cancellation).
    stream.on('error', (err) => {
      if (!this.answered) options.onError(`call to ${route.path} cut short by its client`, err);
    });
  }

  /** Starts the deadline timer and reading the request. */
  start(): void {
    if (this.deadline) {
      if (this.deadline.getTime() <= Date.now()) { this.deadlinePassed(); return; }
      this.cancelTimer = onDeadline(this.deadline.getTime(), () => this.deadlinePassed());
    }
    this.stream.on('data', (chunk: Buffer) => this.received(chunk));
    this.stream.once('end', () => { void this.requestEnded(); });
  }

  /** Cancels the call (forced shutdown): the handler's signal aborts and the client gets CANCELLED if still waiting. */
  cancel(): void {
    this.abort.abort(new GrpcError(GrpcStatus.CANCELLED, 'the server is shutting down'));
    this.fail(GrpcStatus.CANCELLED, 'the server is shutting down');
  }

  private received(chunk: Buffer): void {
    if (!this.reading) return;
    const problem = this.deframer.push(chunk);
    if (problem) {
      const status = framingStatus(problem);
      this.fail(status.code, status.details);
    }
  }

  private async requestEnded(): Promise<void> {
    if (!this.reading) return;
    this.reading = false;
    const [message] = this.deframer.messages;
    if (this.deframer.pendingBytes > 0) return this.fail(GrpcStatus.INTERNAL, 'the request ended inside a message');
    if (!message) return this.fail(GrpcStatus.INTERNAL, 'cardinality violation: received no request message from non-client-streaming RPC');
    let bytes: Buffer = message.bytes;
    if (message.compressed) {
      try {
        bytes = await decompressMessage(this.request.encoding, bytes, this.options.maxReceiveMessageLength);
      } catch (err) {
        const status = err instanceof GrpcError ? err : new GrpcError(GrpcStatus.INTERNAL, 'could not decompress the request');
        return this.fail(status.code, status.details);
      }
    }
    let request: unknown;
    try {
      request = this.route.decode(bytes);
    } catch {
      // Never the decoder's message: it may quote the request's bytes.
      return this.fail(GrpcStatus.INTERNAL, `grpc: error unmarshalling request: could not parse the ${this.route.path} request message`);
    }
    if (this.answered) return undefined;
    this.handlerDone = this.run(request);
    return undefined;
  }

  private async run(request: unknown): Promise<void> {
    this.handlerRunning = true;
    let response: unknown;
    try {
      response = await this.route.handle(request, { signal: this.abort.signal, deadline: this.deadline });
    } catch (err) {
      const status = handlerStatus(err, this.route.path, this.options.onError);
      this.fail(status.code, status.details);
      return;
    } finally {
      this.handlerRunning = false;
    }
    let bytes: Uint8Array;
    try {
      bytes = this.route.encode(response);
    } catch (err) {
      this.options.onError(`encoding the response of ${this.route.path} failed`, err);
      this.fail(GrpcStatus.INTERNAL, `the server could not serialize the ${this.route.path} response`);
      return;
    }
    this.succeed(bytes);
  }

  private succeed(message: Uint8Array): void {
    if (this.answered) return;
    this.answered = true;
    this.cancelTimer();
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    try {
      stream.respond({ ':status': 200, 'content-type': GRPC_CONTENT_TYPE, 'grpc-accept-encoding': ACCEPTED_ENCODINGS }, { waitForTrailers: true });
      stream.once('wantTrailers', () => {
        try { stream.sendTrailers({ 'grpc-status': '0' }); } catch { /* reset meanwhile */ }
      });
      stream.end(frameMessage(message));
    } catch {
      // Reset between the check and the answer.
    }
  }

  private fail(code: GrpcStatusCode, message: string): void {
    this.reading = false;
    if (this.answered) return;
    this.answered = true;
    this.cancelTimer();
    answerWithStatus(this.stream, code, message);
  }

  private deadlinePassed(): void {
    this.abort.abort(new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    this.fail(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
  }

  private streamClosed(): void {
    this.reading = false;
    this.cancelTimer();
    if (!this.answered || this.handlerRunning) {
      this.answered = true;
      this.abort.abort(new GrpcError(GrpcStatus.CANCELLED, 'the client cancelled the call or went away'));
    }
  }
}
