// The one place that calls node-vault (0.12.0). It is wrapped where it is sharp:
// - It reads the process environment when an option is empty: `strictSSL:
//   !process.env.VAULT_SKIP_VERIFY` (so VAULT_SKIP_VERIFY=false *disables* verification),
//   `endpoint || VAULT_ADDR`, `token || VAULT_TOKEN`, `namespace || VAULT_NAMESPACE`,
//   `pathPrefix || VAULT_PREFIX`. Every option is passed explicitly here (TLS goes to the
//   transport's agent, which ignores node-vault's `strictSSL` default) and the fields are
//   overwritten after construction, so nothing comes from VAULT_*.
// - It has no default timeout: every call here has one (--vault-request-timeout, bounded
//   by the Mount's deadline) for the whole call, answer and redirect included, and ends
//   the request when it passes or the Mount is cancelled.
// - Its login commands (tokenSource) overwrite the client's shared token: they are not
//   used; logins go through the generic request with no token, and the token of an
//   identity is sent per call as a header, so `client.token` stays empty.
// - Its `debug` logger prints request bodies (logins carry the service-account JWT) when
//   DEBUG=node-vault is set: it gets a logger that prints nothing.
// - Its commands render paths with mustache, which HTML-escapes them: only the generic
//   `request` is used, with a path built and encoded here.
// - Its transport (axios) follows up to 21 redirects with the token, to any host, and
//   reads answers of any size, and node-vault can't set either: vault-transport.ts sends
//   its requests instead (same origin, one redirect; at most --vault-max-response-bytes).
//   axios honours HTTP_PROXY/HTTPS_PROXY/NO_PROXY: documented in docs/providers/vault.md.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import createNodeVault from 'node-vault';
import { SscError } from '../../lib/errors.js';
import type { VaultTlsConfig } from './settings.js';
import { failureOf, type VaultFailure } from './vault-errors.js';
import { VaultCallError, vaultTransport, type NodeVaultTransport } from './vault-transport.js';

export { VaultCallError } from './vault-transport.js';

/** One call to the Vault API. */
export interface VaultCall {
  readonly method: 'GET' | 'PUT' | 'POST';
  /** API path after `/v1/`, not yet encoded: `secret/data/db`. */
  readonly path: string;
  /** `?a=b…` or ''. */
  readonly query?: string;
  readonly body?: unknown;
  /** Sent as X-Vault-Token; undefined for a login. Never logged. */
  readonly token?: string | undefined;
  readonly timeoutMs: number;
  /** The Mount's signal: when it aborts, the call fails at once with a deadline failure. */
  readonly signal?: AbortSignal | undefined;
}

/** The Vault API as the provider uses it: one client for one address, namespace and TLS setup (client-pool.ts). */
export interface VaultHttp {
  /** Resolves with the response body (undefined for 204); rejects with VaultCallError. */
  call(call: VaultCall): Promise<unknown>;
  /** Closes the client's sockets once its calls in flight end (nobody uses it any more). */
  close?(): void;
}

/** The TLS options for https.Agent from the settings' files; throws FAILED_PRECONDITION naming an unreadable file. */
export async function tlsOptions(tls: VaultTlsConfig): Promise<{ ca?: Buffer[]; cert?: Buffer; key?: Buffer }> {
  const read = async (path: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new SscError(
        'failed-precondition',
        `cannot read the ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { reason: 'VaultTLSConfig' },
      );
    }
  };
  const out: { ca?: Buffer[]; cert?: Buffer; key?: Buffer } = {};
  if (tls.caCertPath !== undefined) {
    out.ca = [await read(tls.caCertPath, 'CA certificate (vaultCACertPath, --vault-tls-ca-cert or VAULT_CACERT)')];
  } else if (tls.caDirectory !== undefined) {
    let names: string[];
    try {
      names = (await readdir(tls.caDirectory, { withFileTypes: true }))
        .filter((d) => d.isFile() || d.isSymbolicLink())
        .map((d) => d.name)
        .sort();
    } catch (err) {
      throw new SscError(
        'failed-precondition',
        `cannot read the CA directory ${tls.caDirectory} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { reason: 'VaultTLSConfig' },
      );
    }
    out.ca = await Promise.all(names.map((n) => read(join(tls.caDirectory as string, n), 'CA certificate')));
  }
  if (tls.clientCertPath !== undefined && tls.clientKeyPath !== undefined) {
    out.cert = await read(tls.clientCertPath, 'client certificate');
    out.key = await read(tls.clientKeyPath, 'client key');
  }
  return out;
}

/** node-vault's client fields this module sets after construction (its typings lack some). */
interface NodeVaultFields {
  endpoint: string;
  token: string;
  namespace: string;
  pathPrefix: string;
  request(options: Record<string, unknown>): Promise<unknown>;
}

/** The API path encoded segment by segment: `secretPath` is literal text, as Vault's Go client sends it. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** What a client is allowed: the largest answer it reads. */
export interface VaultHttpLimits {
  /** Bytes of one answer (decompressed); more fails the call (--vault-max-response-bytes). */
  readonly maxResponseBytes: number;
}

/** node-vault over `transport`, configured only from these arguments. */
function nodeVaultClient(endpoint: string, namespace: string, transport: NodeVaultTransport): NodeVaultFields {
  const options = {
    endpoint,
    apiVersion: 'v1',
    token: '',
    namespace,
    pathPrefix: '',
    noCustomHTTPVerbs: true,
    debug: () => undefined,
    'request-promise': transport,
  };
  const client = createNodeVault(options as Parameters<typeof createNodeVault>[0]) as unknown as NodeVaultFields;
  // The constructor filled the empty ones from VAULT_*: set them back.
  client.endpoint = endpoint;
  client.token = '';
  client.namespace = namespace;
  client.pathPrefix = '';
  return client;
}

/**
 * Whichever ends a call first, its timeout or the Mount, aborts the request itself:
 * `signal` for the request, `ended()` says which ended it, `release()` stops watching.
 */
function callLimit(call: { readonly timeoutMs: number; readonly signal?: AbortSignal | undefined }) {
  const stop = new AbortController();
  let ended: VaultFailure | undefined;
  const end = (failure: VaultFailure) => {
    if (!ended) {
      ended = failure;
      stop.abort();
    }
  };
  const timer = setTimeout(() => end({ type: 'timeout', ms: call.timeoutMs }), Math.max(1, Math.floor(call.timeoutMs)));
  const onAbort = () => end({ type: 'deadline' });
  call.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: stop.signal,
    ended: () => ended,
    release: () => {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** A node-vault client for `address` (no trailing slash), `namespace` and `tls`, configured only from these arguments. */
export async function createVaultHttp(
  address: string,
  namespace: string | undefined,
  tls: VaultTlsConfig,
  limits: VaultHttpLimits,
): Promise<VaultHttp> {
  const files = await tlsOptions(tls);
  const agentOptions: Record<string, unknown> = { ...files, rejectUnauthorized: !tls.skipVerify, keepAlive: true };
  if (tls.serverName !== undefined) agentOptions['servername'] = tls.serverName;
  const endpoint = address.replace(/\/+$/, '');
  const transport = vaultTransport(agentOptions, limits.maxResponseBytes);
  // A client let go of may still have calls of a Mount in flight: close after them.
  let active = 0;
  let closing = false;
  const client = nodeVaultClient(endpoint, namespace ?? '', transport);
  return {
    close() {
      closing = true;
      if (active === 0) transport.destroy();
    },
    async call(call) {
      if (call.signal?.aborted) throw new VaultCallError({ type: 'deadline' });
      active++;
      const headers: Record<string, string> = {};
      if (call.token !== undefined) headers['X-Vault-Token'] = call.token;
      const limit = callLimit(call);
      try {
        // node-vault passes these through to vault-transport.ts (signal included).
        return await client.request({
          method: call.method,
          path: `/${encodePath(call.path)}${call.query ?? ''}`,
          headers,
          signal: limit.signal,
          ...(call.body === undefined ? {} : { json: call.body }),
        });
      } catch (err) {
        const ended = limit.ended();
        if (ended) throw new VaultCallError(ended);
        if (err instanceof VaultCallError) throw err;
        throw new VaultCallError(failureOf(err, call.timeoutMs));
      } finally {
        limit.release();
        active--;
        if (closing && active === 0) transport.destroy();
      }
    },
  };
}
