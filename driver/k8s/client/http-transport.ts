import { createHash } from 'node:crypto';
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { nodeHttp } from '../../../lib/node-http.js';
import { KubeCredentialError, type RequestAuth } from './credentials.js';
import type { ApiEndpoint } from './kubeconfig.js';

/** Requests in flight to the API server at once; more wait for a connection (watches have their own pool). */
const MAX_SOCKETS = 16;
/**
 * An idle pooled connection is closed after this long: kube-apiserver closes idle
 * connections itself (90 s), and a request sent on one it just closed would fail.
 */
const IDLE_SOCKET_MS = 60_000;

/** Told of every request: its HTTP method and status code, or "<error>" when none came (metrics). */
export type RequestObserver = (method: string, code: string) => void;

/** A response head; the body is read by the caller. */
export interface Answer {
  readonly statusCode: number;
  readonly message: IncomingMessage;
  /** What we cut the exchange with (deadline, signal), if we did: a better error than "aborted". */
  readonly closedBy: () => Error | undefined;
}

/** Limits of one exchange: `deadlineMs` covers the whole of it, body included. */
export interface ExchangeLimits {
  readonly deadlineMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** A watch: its own connection pool, so long-lived watches never starve requests. */
  readonly watch?: boolean;
}

/** Marks an error of a request sent on a reused keep-alive connection that the server had closed. */
export const STALE_CONNECTION = Symbol('stale keep-alive connection');

/** An Error with an errno-style `code` (what fromKubeError reads). */
export function errnoError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** Node refuses a header it cannot send (a credential with a control character) synchronously: say which. */
function refusedRequestError(err: unknown): Error {
  if ((err as { code?: unknown }).code === 'ERR_INVALID_CHAR') {
    return new KubeCredentialError('the credentials hold a character an HTTP header cannot carry');
  }
  return err as Error;
}

/** Marks a reset of a reused keep-alive connection: the server closed it idle, so the request may be sent again. */
function markStaleConnection(req: ClientRequest, err: Error): void {
  const code = (err as { code?: unknown }).code;
  if ((req as { reusedSocket?: boolean }).reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
    Object.assign(err, { [STALE_CONNECTION]: true });
  }
}

/** Calls `abort` when the exchange's signal aborts or its deadline passes; returns what stops watching. */
function watchLimits(limits: ExchangeLimits, abort: (err: Error) => void): () => void {
  const { signal, deadlineMs } = limits;
  const onAbort = () =>
    abort(signal?.reason instanceof Error ? signal.reason : errnoError('request aborted', 'ABORT_ERR'));
  if (signal?.aborted) {
    onAbort();
    return () => {};
  }
  const deadline = `no answer from the API server within ${deadlineMs} ms`;
  const timer =
    deadlineMs === undefined ? undefined : setTimeout(() => abort(errnoError(deadline, 'ETIMEDOUT')), deadlineMs);
  signal?.addEventListener('abort', onAbort, { once: true });
  return () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
}

/**
 * HTTP exchanges with the API server: the endpoint's TLS settings, keep-alive pools
 * (one for requests, one for watches), the server URL's path prefix kept (a proxied
 * cluster such as Rancher's /k8s/clusters/<id>), deadlines that hold even while a
 * request waits for a pooled connection.
 */
export class HttpTransport {
  private pools: { key: string; requests: HttpAgent; watches: HttpAgent } | undefined;
  private readonly base: string;

  constructor(
    private readonly endpoint: ApiEndpoint,
    private readonly userAgent: string,
    private readonly observe: RequestObserver,
  ) {
    this.base = `${endpoint.server.origin}${endpoint.server.pathname.replace(/\/+$/, '')}`;
  }

  /** Sends a request; resolves with the response head. Rejects once, whatever happens after. */
  send(
    method: string,
    path: string,
    auth: RequestAuth,
    payload: string | undefined,
    contentType: string | undefined,
    limits: ExchangeLimits,
  ): Promise<Answer> {
    const url = new URL(`${this.base}${path}`);
    const headers = this.headersFor(auth, payload, contentType);
    const request = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
    return new Promise((resolve, reject) => {
      let reason: Error | undefined;
      let answered = false;
      let settled = false;
      let req: ClientRequest | undefined;
      let cleanup = () => {};
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        cleanup();
        this.observe(method, '<error>');
        reject(err);
      };
      // Rejects at once: a request still queued for a pooled connection emits nothing when destroyed.
      const abort = (err: Error) => {
        reason ??= err;
        req?.destroy(err);
        if (!answered) fail(err);
      };
      try {
        req = request(
          url,
          { method, headers, agent: this.agentFor(url.protocol, auth, limits.watch === true) },
          (message) => {
            answered = true;
            settled = true;
            message.on('close', cleanup);
            this.observe(method, String(message.statusCode ?? 0));
            resolve({ statusCode: message.statusCode ?? 0, message, closedBy: () => reason });
          },
        );
      } catch (err) {
        fail(refusedRequestError(err));
        return;
      }
      const sent = req;
      sent.on('error', (err) => {
        if (!reason) markStaleConnection(sent, err);
        fail(reason ?? err);
      });
      cleanup = watchLimits(limits, abort);
      sent.end(payload);
    });
  }

  private headersFor(
    auth: RequestAuth,
    payload: string | undefined,
    contentType: string | undefined,
  ): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', 'User-Agent': this.userAgent };
    if (auth.authorization) headers['Authorization'] = auth.authorization;
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    return headers;
  }

  /** Closes pooled connections (driver shutdown). */
  close(): void {
    this.pools?.requests.destroy();
    this.pools?.watches.destroy();
    this.pools = undefined;
  }

  /** The pools for these TLS settings (a credential plugin may rotate the client certificate). */
  private agentFor(protocol: string, auth: RequestAuth, watch: boolean): HttpAgent {
    const key = auth.cert ? createHash('sha256').update(auth.cert).digest('hex') : '';
    if (this.pools?.key !== key) {
      // The old pools are dropped, not destroyed: requests and watches in flight finish on
      // them, and their idle connections close after IDLE_SOCKET_MS.
      const tls = { ...this.endpoint.tls, ...(auth.cert && auth.key ? { cert: auth.cert, key: auth.key } : {}) };
      const make = (maxSockets: number) => {
        const options = { keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
        return protocol === 'https:' ? new HttpsAgent({ ...options, ...tls }) : new nodeHttp.Agent(options);
      };
      this.pools = { key, requests: make(MAX_SOCKETS), watches: make(Number.POSITIVE_INFINITY) };
    }
    return watch ? this.pools.watches : this.pools.requests;
  }
}

/** Splits a watch stream into its lines (one JSON event each), whatever the chunking. */
export class LineDecoder {
  private pending = '';

  /** The complete, non-blank lines this chunk finishes. */
  push(chunk: string): string[] {
    const parts = (this.pending + chunk).split('\n');
    this.pending = parts.pop() ?? '';
    return parts.filter((line) => line.trim() !== '');
  }
}

/** Reads a whole response body as text; a cut-off body rejects (with `closedBy()` when we cut it). */
export function readBody(answer: Answer): Promise<string> {
  const { message, closedBy } = answer;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    message.on('error', (err) => reject(closedBy() ?? err));
    // 'close' follows every answer: the error (a stack capture, ~40 µs) only for one cut off.
    message.on('close', () => {
      if (!ended) reject(closedBy() ?? errnoError('the API server closed the connection mid-answer', 'ECONNRESET'));
    });
  });
}
