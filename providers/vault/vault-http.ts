// The one place that calls node-vault (0.12.0). It is wrapped where it is sharp:
// - It reads the process environment when an option is empty: `strictSSL:
//   !process.env.VAULT_SKIP_VERIFY` (so VAULT_SKIP_VERIFY=false *disables* verification),
//   `endpoint || VAULT_ADDR`, `token || VAULT_TOKEN`, `namespace || VAULT_NAMESPACE`,
//   `pathPrefix || VAULT_PREFIX`. Every option is passed explicitly here and the fields
//   are overwritten after construction, so nothing comes from VAULT_*.
// - It has no default timeout: every call here has one, bounded by the Mount's deadline.
//   It forwards `timeout` but no AbortSignal, so a call also races the Mount's signal.
// - Its login commands (tokenSource) overwrite the client's shared token: they are not
//   used; logins go through the generic request with no token, and the token of an
//   identity is sent per call as a header, so `client.token` stays empty.
// - Its `debug` logger prints request bodies (logins carry the service-account JWT) when
//   DEBUG=node-vault is set: it gets a logger that prints nothing.
// - Its commands render paths with mustache, which HTML-escapes them: only the generic
//   `request` is used, with a path built and encoded here.
// - axios honours HTTP_PROXY/HTTPS_PROXY/NO_PROXY and follows redirects: documented in
//   docs/providers/vault.md.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import createNodeVault from 'node-vault';
import { SscError } from '../../proto/runtime/errors.js';
import type { VaultTlsConfig } from './settings.js';
import { failureOf, type VaultFailure } from './vault-errors.js';

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

/** A failed call: only the reduced failure is kept (the raw error holds headers and the token). */
export class VaultCallError extends Error {
  constructor(readonly failure: VaultFailure) {
    super(`Vault call failed (${failure.type})`);
    this.name = 'VaultCallError';
  }
}

/** The Vault API as the provider uses it: one client for one address, namespace and TLS setup. */
export interface VaultHttp {
  /** Resolves with the response body (undefined for 204); rejects with VaultCallError. */
  call(call: VaultCall): Promise<unknown>;
}

/** The TLS options for https.Agent from the settings' files; throws FAILED_PRECONDITION naming an unreadable file. */
export async function tlsOptions(tls: VaultTlsConfig): Promise<{ ca?: Buffer[]; cert?: Buffer; key?: Buffer }> {
  const read = async (path: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new SscError('failed-precondition', `vault provider: cannot read the ${what} ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { reason: 'VaultTLSConfig' });
    }
  };
  const out: { ca?: Buffer[]; cert?: Buffer; key?: Buffer } = {};
  if (tls.caCertPath !== undefined) {
    out.ca = [await read(tls.caCertPath, 'CA certificate (vaultCACertPath, --vault-tls-ca-cert or VAULT_CACERT)')];
  } else if (tls.caDirectory !== undefined) {
    let names: string[];
    try {
      names = (await readdir(tls.caDirectory, { withFileTypes: true })).filter((d) => d.isFile() || d.isSymbolicLink()).map((d) => d.name).sort();
    } catch (err) {
      throw new SscError('failed-precondition', `vault provider: cannot read the CA directory ${tls.caDirectory} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { reason: 'VaultTLSConfig' });
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

/** A node-vault client for `address` (no trailing slash), `namespace` and `tls`, configured only from these arguments. */
export async function createVaultHttp(address: string, namespace: string | undefined, tls: VaultTlsConfig): Promise<VaultHttp> {
  const files = await tlsOptions(tls);
  const strictSSL = !tls.skipVerify;
  const agentOptions: Record<string, unknown> = { rejectUnauthorized: strictSSL, keepAlive: true };
  if (tls.serverName !== undefined) agentOptions['servername'] = tls.serverName;
  const endpoint = address.replace(/\/+$/, '');
  const options = {
    endpoint, apiVersion: 'v1', token: '', namespace: namespace ?? '', pathPrefix: '', noCustomHTTPVerbs: true,
    debug: () => undefined,
    rpDefaults: { strictSSL },
    requestOptions: { ...files, strictSSL, agentOptions },
  };
  const client = createNodeVault(options as Parameters<typeof createNodeVault>[0]) as unknown as NodeVaultFields;
  // The constructor filled the empty ones from VAULT_*: set them back.
  client.endpoint = endpoint;
  client.token = '';
  client.namespace = namespace ?? '';
  client.pathPrefix = '';
  return {
    async call(call) {
      if (call.signal?.aborted) throw new VaultCallError({ type: 'deadline' });
      const headers: Record<string, string> = {};
      if (call.token !== undefined) headers['X-Vault-Token'] = call.token;
      // node-vault spreads these per-call options over config.requestOptions: the TLS
      // settings must stay the same objects, or it builds a new agent per call.
      const request = client.request({
        ...options.requestOptions, method: call.method, path: `/${encodePath(call.path)}${call.query ?? ''}`, headers,
        timeout: Math.max(1, Math.floor(call.timeoutMs)),
        ...(call.body === undefined ? {} : { json: call.body }),
      });
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(new VaultCallError({ type: 'deadline' }));
        call.signal?.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([request, aborted]);
      } catch (err) {
        if (err instanceof VaultCallError) throw err;
        throw new VaultCallError(failureOf(err, call.timeoutMs));
      } finally {
        if (onAbort) call.signal?.removeEventListener('abort', onAbort);
        request.catch(() => undefined); // the race's loser must not become an unhandled rejection
      }
    },
  };
}
