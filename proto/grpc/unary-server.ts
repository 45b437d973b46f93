// A unary-only gRPC server on node:http2, listening on a Unix socket with HTTP/2 prior
// knowledge (h2c), the way kubelet, csi-sanity, upstream's Go driver and grpc-js connect
// to CSI drivers and providers. It replaces grpc-js on the serving side (issue 15: grpc-js
// and protobufjs cost ~12 MiB of RSS and CPU per call); message codecs come with each method.
import { createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { UnaryMethod } from './method.js';
import { checkRequestHeaders, unknownPathMessage } from './request-headers.js';
import { answerWithStatus, ServerCall, type CallContext, type Route } from './server-call.js';

export type { CallContext } from './server-call.js';

/** Options of a UnaryServer. */
export interface UnaryServerOptions {
  /** Largest request message accepted, compressed or not (default 4 MiB, as grpc-go and grpc-js). */
  readonly maxReceiveMessageLength?: number;
  /** Told about failures worth a log line (a handler's unexpected error, a call cut short by a broken stream or connection); never given request contents. */
  readonly onError?: (what: string, err: unknown) => void;
}

/** Serves one unary method: the request decoded, the call's context; resolves with the response or rejects (GrpcError for a chosen status). */
export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

const DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024;

/** A gRPC server for unary methods on one Unix socket. */
export class UnaryServer {
  private readonly routes = new Map<string, Route>();
  private readonly paths = new Set<string>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly calls = new Set<ServerCall>();
  private readonly maxReceiveMessageLength: number;
  private readonly onError: (what: string, err: unknown) => void;
  private server: Http2Server | undefined;
  private closing = false;
  private shutdown: Promise<void> | undefined;
  private forced: (() => void) | undefined;

  constructor(options: UnaryServerOptions = {}) {
    this.maxReceiveMessageLength = options.maxReceiveMessageLength ?? DEFAULT_MAX_RECEIVE;
    const report = options.onError;
    this.onError = (what, err) => {
      try { report?.(what, err); } catch { /* a logger's failure must not break serving */ }
    };
  }

  /** Serves `method` with `handler`; a path may be served once. */
  add<Req, Res>(method: UnaryMethod<Req, Res>, handler: UnaryHandler<Req, Res>): void {
    if (this.routes.has(method.path)) throw new Error(`${method.path} is already served`);
    this.routes.set(method.path, {
      path: method.path,
      decode: (bytes) => method.request.decode(bytes),
      encode: (response) => method.response.encode(response as Res),
      handle: (request, ctx) => handler(request as Req, ctx),
    });
    this.paths.add(method.path);
  }

  /** Listens on `socketPath` (the caller removes a stale socket file first); rejects when it cannot bind. */
  async listen(socketPath: string): Promise<void> {
    if (this.server) throw new Error('the server is already listening');
    const server = createServer();
    this.server = server;
    server.on('session', (session: ServerHttp2Session) => this.adopt(session));
    server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => this.dispatch(stream, headers));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      this.server = undefined; // listen may be tried again (after removing a stale socket)
      throw err;
    }
    server.on('error', (err) => this.onError('server', err));
  }

  /**
   * Stops accepting connections, sends GOAWAY on each one, and resolves once the calls
   * already running have ended (their handlers settled) and every connection has closed,
   * or when forceShutdown is called.
   */
  tryShutdown(): Promise<void> {
    if (!this.server) return Promise.resolve();
    this.shutdown ??= this.closeGracefully(this.server);
    return this.shutdown;
  }

  /** Cancels every running call (handlers see their signal abort), drops every connection and stops listening. */
  forceShutdown(): void {
    this.closing = true;
    for (const call of this.calls) call.cancel();
    for (const session of this.sessions) session.destroy();
    this.server?.close();
    this.forced?.();
  }

  private async closeGracefully(server: Http2Server): Promise<void> {
    this.closing = true;
    const forced = new Promise<void>((resolve) => { this.forced = resolve; });
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of this.sessions) session.close();
    const calls = Promise.all([...this.calls].map((c) => c.ended));
    await Promise.race([Promise.all([closed, calls]), forced]);
  }

  private adopt(session: ServerHttp2Session): void {
    this.sessions.add(session);
    // A connection's protocol errors are its client's, and harmless when no call is cut
    // short (those are reported by their streams): every grpc-go client (kubelet,
    // csi-sanity) trips one when it hangs up, its GOAWAY naming its own last stream id,
    // which nghttp2 refuses. So they are not reported; the listener keeps them from
    // crashing the process.
    session.on('error', () => {});
    session.once('close', () => this.sessions.delete(session));
    if (this.closing) session.close();
  }

  private dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    // A reset stream errors; the call learns of it through its 'close' event.
    stream.on('error', () => {});
    const verdict = checkRequestHeaders(headers, (path) => unknownPathMessage(path, this.paths));
    if ('httpStatus' in verdict) {
      answerWithStatus(stream, verdict.code, verdict.message, verdict.httpStatus);
      return;
    }
    const route = this.routes.get(verdict.path) as Route;
    const call = new ServerCall(stream, route, verdict, { maxReceiveMessageLength: this.maxReceiveMessageLength, onError: this.onError });
    this.calls.add(call);
    void call.ended.then(() => this.calls.delete(call));
    call.start();
  }
}
