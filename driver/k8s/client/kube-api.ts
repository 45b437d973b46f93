import { CredentialSource } from './credentials.js';
import {
  errnoError,
  HttpTransport,
  LineDecoder,
  readBody,
  STALE_CONNECTION,
  type Answer,
  type RequestObserver,
} from './http-transport.js';
import type { ApiEndpoint } from './kubeconfig.js';
import type { WatchEvent } from './types.js';

/**
 * Longest a single API request may take. A half-open connection would otherwise hold a
 * volume's lock forever and block its unpublish.
 */
export const API_REQUEST_TIMEOUT_MS = 15_000;
/** A watch the server has not ended this long after its timeoutSeconds is dead. */
const WATCH_GRACE_MS = 30_000;

/**
 * An API response with a status outside 2xx. `code` is the HTTP status; method, path
 * (without query) and `watch` say which request, so a 403 can name the RBAC right it needed.
 */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    readonly method: string,
    readonly path: string,
    readonly watch = false,
  ) {
    super(`HTTP ${code} from ${watch ? 'WATCH' : method} ${path}`);
    this.name = 'KubeApiError';
  }
}

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

/**
 * Told of every watch (metrics): when the server accepted it, each event it sent (its type
 * and size in bytes, newline included), and when it ended. `path` is the collection watched.
 */
export interface WatchObserver {
  opened(path: string): void;
  received(path: string, type: string, bytes: number): void;
  closed(path: string): void;
}

/** Query parameters; undefined ones are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

function withQuery(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const q = params.toString();
  return q === '' ? path : `${path}?${q}`;
}

/** JSON patch (RFC 6902), the only patch type the driver sends. */
const JSON_PATCH = 'application/json-patch+json';
/** Server-side apply takes YAML, of which JSON is a subset. */
const APPLY_PATCH = 'application/apply-patch+yaml';
const MERGE_PATCH = 'application/merge-patch+json';

/**
 * Methods re-sent after a reused keep-alive connection failed at once: idempotent (RFC 9110),
 * since the server may have received the first one. A DELETE re-sent after it took effect
 * answers 404, which every DELETE caller must accept (deletePodStatus does).
 */
const RESENDABLE = new Set(['GET', 'DELETE']);

/**
 * A small client for the Kubernetes REST API: JSON requests and watches with the
 * kubeconfig's or the pod's credentials over keep-alive connections. The driver makes
 * about fifteen kinds of call; a generated client for every API group cost it ~25 MiB of
 * memory (module source and compiled code) and a TLS handshake per request.
 */
export class KubeApi {
  private readonly credentials: CredentialSource;
  private readonly transport: HttpTransport;
  private readonly timeoutMs: number;
  private readonly watchObserver: WatchObserver | undefined;

  constructor(
    endpoint: ApiEndpoint,
    options: {
      timeoutMs?: number;
      credentials?: CredentialSource;
      userAgent?: string;
      observe?: RequestObserver;
      observeWatch?: WatchObserver;
    } = {},
  ) {
    this.watchObserver = options.observeWatch;
    this.credentials = options.credentials ?? new CredentialSource(endpoint.credentials);
    this.timeoutMs = options.timeoutMs ?? API_REQUEST_TIMEOUT_MS;
    this.transport = new HttpTransport(
      endpoint,
      options.userAgent ?? 'secrets-store-csi',
      options.observe ?? (() => undefined),
    );
  }

  /** A GET; `signal` abandons it (the cache's shutdown). */
  get<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', withQuery(path, query), undefined, undefined, signal);
  }

  /** A POST; `signal` abandons it (e.g. a deadline shorter than the client's). */
  create<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.request<T>('POST', path, body, undefined, signal);
  }

  /** A PUT; `signal` abandons it. */
  replace<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return this.request<T>('PUT', path, body, undefined, signal);
  }

  /** A JSON patch (a list of operations). */
  patch<T>(path: string, operations: readonly object[]): Promise<T> {
    return this.request<T>('PATCH', path, operations, JSON_PATCH);
  }

  /**
   * A server-side apply of `body` as `fieldManager`; without `force` a field another
   * manager set fails the apply with 409, with it the fields are taken over.
   */
  apply<T>(path: string, body: object, fieldManager: string, force = false): Promise<T> {
    return this.request<T>('PATCH', withQuery(path, { fieldManager, force: force || undefined }), body, APPLY_PATCH);
  }

  /** A JSON merge patch (RFC 7386), e.g. of a status subresource. */
  mergePatch<T>(path: string, body: object): Promise<T> {
    return this.request<T>('PATCH', path, body, MERGE_PATCH);
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
    const auth = await this.credentials.current();
    const answer = await this.transport.send(
      'GET',
      withQuery(path, { ...query, watch: true }),
      auth,
      undefined,
      undefined,
      { signal, watch: true, deadlineMs: timeoutSeconds > 0 ? timeoutSeconds * 1000 + WATCH_GRACE_MS : undefined },
    );
    if (answer.statusCode !== 200) {
      const body = await readBody(answer);
      if (answer.statusCode === 401) this.credentials.invalidate(auth);
      throw new KubeApiError(answer.statusCode, body, 'GET', path, true);
    }
    const { message, closedBy } = answer;
    const observer = this.watchObserver;
    observer?.opened(path);
    try {
      await this.readWatch(message, closedBy, (line) => {
        const event = JSON.parse(line) as WatchEvent;
        observer?.received(path, event.type, Buffer.byteLength(line) + 1);
        onEvent(event);
      });
    } finally {
      observer?.closed(path);
    }
  }

  /** Reads a watch's event lines until the server ends it (resolves) or the connection fails (rejects). */
  private readWatch(
    message: Answer['message'],
    closedBy: Answer['closedBy'],
    onLine: (line: string) => void,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const lines = new LineDecoder();
      message.setEncoding('utf8');
      message.on('data', (chunk: string) => {
        try {
          for (const line of lines.push(chunk)) onLine(line);
        } catch (err) {
          message.destroy(err as Error);
        }
      });
      let ended = false;
      message.on('end', () => {
        ended = true;
        resolve();
      });
      // Whatever ended it (our deadline, the signal) explains the failure better than "aborted".
      message.on('error', (err) => reject(closedBy() ?? err));
      message.on('close', () => {
        if (!ended) reject(closedBy() ?? errnoError('watch connection closed', 'ECONNRESET'));
      });
    });
  }

  /** Closes pooled connections (driver shutdown). */
  close(): void {
    this.transport.close();
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    signal?: AbortSignal,
  ): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let resent = false;
    let renewed = false;
    for (;;) {
      const auth = await this.credentials.current();
      let answer;
      try {
        answer = await this.transport.send(method, path, auth, payload, contentType, {
          deadlineMs: this.timeoutMs,
          signal,
        });
      } catch (err) {
        // A pooled connection the server had just closed: sent once more on a new one.
        if (!resent && RESENDABLE.has(method) && (err as { [STALE_CONNECTION]?: boolean })[STALE_CONNECTION]) {
          resent = true;
          continue;
        }
        throw err;
      }
      const text = await readBody(answer);
      if (answer.statusCode === 401 && this.credentials.renewable) {
        // A rotated token file or an expired plugin credential: renew and try once more.
        this.credentials.invalidate(auth);
        if (!renewed) {
          renewed = true;
          continue;
        }
      }
      if (answer.statusCode < 200 || answer.statusCode >= 300)
        throw new KubeApiError(answer.statusCode, text, method, path.split('?')[0] ?? path);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }
  }
}
