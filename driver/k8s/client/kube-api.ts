import { createHash } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { CredentialSource, type RequestAuth } from './credentials.js';
import type { ApiEndpoint } from './kubeconfig.js';
import type { WatchEvent } from './types.js';

/**
 * Longest a single API request may take. A half-open connection would otherwise hold a
 * volume's lock forever and block its unpublish.
 */
export const API_REQUEST_TIMEOUT_MS = 15_000;
/** Requests in flight to the API server at once; more wait for a connection. */
const MAX_SOCKETS = 16;
/** A watch the server has not ended this long after its timeoutSeconds is dead. */
const WATCH_GRACE_MS = 30_000;

/** An API response with a status outside 2xx. `code` is the HTTP status. */
export class KubeApiError extends Error {
  constructor(readonly code: number, readonly body: string, method: string, path: string) {
    super(`HTTP ${code} from ${method} ${path}`);
    this.name = 'KubeApiError';
  }
}

/** Told of every request: its HTTP method and status code, or "<error>" when none came (metrics). */
export type RequestObserver = (method: string, code: string) => void;

/** Which object or collection: core (`group` empty) or a named API group. */
export interface ResourceRef {
  readonly group?: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  readonly subresource?: string | undefined;
}

/** The REST path of a resource, e.g. /api/v1/namespaces/ns/pods/name. */
export function resourcePath(ref: ResourceRef): string {
  const parts = [ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`];
  if (ref.namespace !== undefined) parts.push('namespaces', encodeURIComponent(ref.namespace));
  parts.push(ref.resource);
  if (ref.name !== undefined) parts.push(encodeURIComponent(ref.name));
  if (ref.subresource !== undefined) parts.push(ref.subresource);
  return parts.join('/');
}

/** Query parameters; undefined ones are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

function withQuery(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const q = params.toString();
  return q === '' ? path : `${path}?${q}`;
}

function errnoError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** JSON patch (RFC 6902), the only patch type the driver sends. */
export const JSON_PATCH = 'application/json-patch+json';

/**
 * A small client for the Kubernetes REST API: JSON requests and watches over one
 * keep-alive agent, with the kubeconfig's or the pod's credentials. The driver makes
 * about fifteen kinds of call; a generated client for every API group cost it ~25 MiB
 * of memory (module source and compiled code) and a TLS handshake per request.
 */
export class KubeApi {
  private readonly credentials: CredentialSource;
  private agent: { key: string; agent: HttpAgent } | undefined;
  private readonly userAgent: string;

  private readonly timeoutMs: number;

  private readonly observe: RequestObserver;

  constructor(private readonly endpoint: ApiEndpoint, options: { timeoutMs?: number; credentials?: CredentialSource; userAgent?: string; observe?: RequestObserver } = {}) {
    this.credentials = options.credentials ?? new CredentialSource(endpoint.credentials);
    this.observe = options.observe ?? (() => undefined);
    this.timeoutMs = options.timeoutMs ?? API_REQUEST_TIMEOUT_MS;
    this.userAgent = options.userAgent ?? 'secrets-store-csi';
  }

  /** The API server's URL (for log lines). */
  get server(): string {
    return this.endpoint.server.origin;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', withQuery(path, query));
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  replace<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body);
  }

  /** A JSON patch (a list of operations). */
  patch<T>(path: string, operations: readonly object[]): Promise<T> {
    return this.request<T>('PATCH', path, operations, JSON_PATCH);
  }

  async delete(path: string): Promise<void> {
    await this.request<unknown>('DELETE', path);
  }

  /**
   * Watches `path` from `resourceVersion`, calling `onEvent` per event, until the server
   * ends the watch (resolves), it fails (rejects; a non-200 answer as KubeApiError), or
   * `signal` aborts (rejects with the signal's reason).
   */
  async watch(path: string, query: Query, onEvent: (event: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const timeoutSeconds = Number(query['timeoutSeconds'] ?? 0);
    const url = withQuery(path, { ...query, watch: true });
    const auth = await this.credentials.current();
    const res = await this.send('GET', url, auth, undefined, undefined, { signal, deadlineMs: timeoutSeconds > 0 ? timeoutSeconds * 1000 + WATCH_GRACE_MS : undefined });
    if (res.statusCode !== 200) {
      const body = await readBody(res.message, res.closedBy);
      if (res.statusCode === 401) this.credentials.invalidate();
      throw new KubeApiError(res.statusCode, body, 'GET', path);
    }
    await new Promise<void>((resolve, reject) => {
      const lines = new LineDecoder();
      res.message.setEncoding('utf8');
      res.message.on('data', (chunk: string) => {
        try {
          for (const line of lines.push(chunk)) onEvent(JSON.parse(line) as WatchEvent);
        } catch (err) {
          res.message.destroy(err as Error);
        }
      });
      res.message.on('end', resolve);
      // Whatever ended it (our deadline, the signal) explains the failure better than "aborted".
      res.message.on('error', (err) => reject(res.closedBy() ?? err));
      res.message.on('close', () => reject(res.closedBy() ?? errnoError('watch connection closed', 'ECONNRESET')));
    });
  }

  /** Closes pooled connections (driver shutdown). */
  close(): void {
    this.agent?.agent.destroy();
    this.agent = undefined;
  }

  private async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      const auth = await this.credentials.current();
      const res = await this.send(method, path, auth, payload, contentType, { deadlineMs: this.timeoutMs });
      const text = await readBody(res.message, res.closedBy);
      if (res.statusCode === 401 && this.credentials.renewable) {
        // A rotated token file or an expired plugin credential: renew and try once more.
        this.credentials.invalidate();
        if (attempt === 1) continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) throw new KubeApiError(res.statusCode, text, method, path.split('?')[0] ?? path);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }
  }

  /** Sends a request and resolves with the response head; the deadline covers the body too. */
  private send(method: string, path: string, auth: RequestAuth, payload: string | undefined, contentType: string | undefined,
    limits: { deadlineMs?: number | undefined; signal?: AbortSignal }): Promise<{ statusCode: number; message: IncomingMessage; closedBy: () => Error | undefined }> {
    const url = new URL(path, this.endpoint.server);
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', 'User-Agent': this.userAgent };
    if (auth.authorization) headers['Authorization'] = auth.authorization;
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      let reason: Error | undefined;
      let answered = false;
      const abort = (err: Error) => { reason ??= err; req.destroy(err); };
      const timer = limits.deadlineMs === undefined ? undefined
        : setTimeout(() => abort(errnoError(`no answer from the API server within ${limits.deadlineMs} ms`, 'ETIMEDOUT')), limits.deadlineMs);
      const onAbort = () => abort(limits.signal?.reason instanceof Error ? limits.signal.reason : errnoError('request aborted', 'ABORT_ERR'));
      const done = () => { clearTimeout(timer); limits.signal?.removeEventListener('abort', onAbort); };
      const req = request(url, { method, headers, agent: this.agentFor(url.protocol, auth) }, (message) => {
        answered = true;
        message.on('close', done);
        this.observe(method, String(message.statusCode ?? 0));
        resolve({ statusCode: message.statusCode ?? 0, message, closedBy: () => reason });
      });
      req.on('error', (err) => {
        done();
        // After a response, errors are the body's (reported by its reader), not a second request.
        if (!answered) this.observe(method, '<error>');
        reject(reason ?? err);
      });
      if (limits.signal?.aborted) onAbort();
      else limits.signal?.addEventListener('abort', onAbort, { once: true });
      req.end(payload);
    });
  }

  /** The keep-alive agent for these TLS settings (a credential plugin may rotate the client certificate). */
  private agentFor(protocol: string, auth: RequestAuth): HttpAgent {
    const tls = { ...this.endpoint.tls, ...(auth.cert && auth.key ? { cert: auth.cert, key: auth.key } : {}) };
    const key = auth.cert ? createHash('sha256').update(auth.cert).digest('hex') : '';
    if (this.agent?.key !== key) {
      this.agent?.agent.destroy();
      const options = { keepAlive: true, maxSockets: MAX_SOCKETS, scheduling: 'lifo' as const };
      this.agent = { key, agent: protocol === 'https:' ? new HttpsAgent({ ...options, ...tls }) : new HttpAgent(options) };
    }
    return this.agent.agent;
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
function readBody(message: IncomingMessage, closedBy: () => Error | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    message.on('error', (err) => reject(closedBy() ?? err));
    message.on('close', () => reject(closedBy() ?? errnoError('the API server closed the connection mid-answer', 'ECONNRESET')));
  });
}
