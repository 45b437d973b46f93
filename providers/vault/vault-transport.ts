// node-vault's HTTP transport, handed to it as its `request-promise` option (the hook it
// keeps for replacing its request library). node-vault still builds every request
// (address, /v1, namespace header, JSON body) and judges every answer (its
// ApiResponseError for a status other than 200/204); this only sends it, with axios, the
// client node-vault itself uses, set up where node-vault's own transport can't be (per
// call it forwards only a timeout, agents and TLS options):
// - Redirects. axios's follow-redirects follows up to 21 and keeps X-Vault-Token (and on
//   a 307 the login body, with the pod's service-account token) even to another host, or
//   from https to http. Here at most one redirect is followed, as Vault's and OpenBao's Go
//   API clients follow one (301, 302, 307), and only within the origin (scheme, host,
//   port) the call went to: anything else fails naming the Location's origin, and nothing
//   is sent there.
// - Size. An answer is read up to `maxResponseBytes` (decompressed); past that the call
//   fails and the connection is dropped, so a broken or hostile Vault can't fill memory.
// - Time. The call's AbortSignal ends it, socket included, not just the wait for it.
// - Throttling. A 429 fails here with its Retry-After, which node-vault's error drops.
import type { AgentOptions } from 'node:https';
import { Agent } from 'node:https';
import axios from 'axios';
import { nodeHttp } from '../../lib/node-http.js';
import type { VaultFailure } from './vault-errors.js';
import { retryAfterMs } from '../framework/retry-after.js';

/** A failed call: only the reduced failure is kept (the raw error holds headers and the token). */
export class VaultCallError extends Error {
  constructor(readonly failure: VaultFailure) {
    super(`Vault call failed (${failure.type})`);
    this.name = 'VaultCallError';
  }
}

/** Redirect statuses followed, the ones Vault's Go API client follows. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 307]);
/** Redirects followed in one call: one, as Vault's Go API client. */
export const MAX_REDIRECTS = 1;

/** What to do with an answer: hand it to node-vault, send the call again to `url`, or fail. */
export type RedirectStep =
  | { readonly kind: 'answer' }
  | { readonly kind: 'follow'; readonly url: URL }
  | { readonly kind: 'refuse'; readonly failure: VaultFailure };

/**
 * The step after an answer of `status` with header `location` to a call to `from`, after
 * `followed` redirects: only a redirect within `from`'s origin is followed, once.
 */
export function redirectStep(from: URL, status: number, location: string | undefined, followed: number): RedirectStep {
  if (!REDIRECT_STATUSES.has(status)) return { kind: 'answer' };
  let to: URL | undefined;
  try {
    to = location ? new URL(location, from) : undefined;
  } catch {
    to = undefined;
  }
  if (!to || (to.protocol !== 'http:' && to.protocol !== 'https:'))
    return { kind: 'refuse', failure: { type: 'redirect', status, target: undefined, why: 'no-location' } };
  if (to.origin !== from.origin)
    return { kind: 'refuse', failure: { type: 'redirect', status, target: to.origin, why: 'other-origin' } };
  if (followed >= MAX_REDIRECTS)
    return { kind: 'refuse', failure: { type: 'redirect', status, target: to.origin, why: 'repeated' } };
  to.username = '';
  to.password = '';
  return { kind: 'follow', url: to };
}

/** What node-vault hands its `request-promise` function: the fields used here. */
interface NodeVaultRequest {
  readonly method: string;
  readonly uri: string;
  readonly headers?: Record<string, string>;
  /** The JSON body (node-vault's defaults also set `json: true`, which means none). */
  readonly json?: unknown;
  /** Passed through node-vault's generic request untouched. */
  readonly signal?: AbortSignal;
}

/** What node-vault expects back. */
interface NodeVaultResponse {
  readonly statusCode: number;
  readonly body: unknown;
  readonly request: { readonly path: string };
}

/** The `request-promise` option of node-vault: `defaults()` gives the request function. */
export interface NodeVaultTransport {
  defaults(): (request: NodeVaultRequest) => Promise<NodeVaultResponse>;
  /** Closes the agent's sockets (nobody uses the client any more). */
  destroy(): void;
}

/**
 * Sockets one client's agent opens to Vault at once; more calls wait for one. Without a
 * bound every object of a large class opened its own (40,000 objects: EMFILE). A client
 * serves every identity with its address, namespace and TLS settings (client-pool.ts).
 */
export const MAX_SOCKETS = 16;
/** Idle sockets kept alive per client. */
export const MAX_FREE_SOCKETS = 4;

/** axios's error for an answer past maxContentLength (it has no code of its own). */
function tooLarge(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === 'ERR_BAD_RESPONSE' && typeof e.message === 'string' && e.message.startsWith('maxContentLength size of')
  );
}

/** A 429 answer reduced to what may be shown: Vault's error texts and the wait it asked for. */
function throttledFailure(headers: Record<string, unknown>, body: unknown): VaultFailure {
  const retryAfter = headers['retry-after'];
  const errors = (body as { errors?: unknown } | null)?.errors;
  return {
    type: 'throttled',
    retryAfterMs: retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, Date.now()),
    errors: Array.isArray(errors) ? errors.filter((x): x is string => typeof x === 'string') : [],
  };
}

/** A transport for one client: TLS from `agentOptions` (one agent, kept alive), answers up to `maxResponseBytes`. */
export function vaultTransport(agentOptions: AgentOptions, maxResponseBytes: number): NodeVaultTransport {
  const bounds = { keepAlive: true, maxSockets: MAX_SOCKETS, maxFreeSockets: MAX_FREE_SOCKETS };
  const httpsAgent = new Agent({ ...agentOptions, ...bounds });
  // An http:// address would otherwise use Node's global agent, which has no bound.
  const httpAgent = new nodeHttp.Agent(bounds);
  const instance = axios.create({
    httpsAgent,
    httpAgent,
    // node-vault judges every status itself; redirects are judged below.
    validateStatus: () => true,
    maxRedirects: 0,
    maxContentLength: maxResponseBytes,
  });
  const send = async (request: NodeVaultRequest): Promise<NodeVaultResponse> => {
    let url = new URL(request.uri);
    for (let followed = 0; ; followed++) {
      let res;
      try {
        res = await instance.request({
          method: request.method,
          url: url.href,
          headers: { ...request.headers },
          signal: request.signal,
          ...(typeof request.json === 'object' && request.json !== null ? { data: request.json } : {}),
        });
      } catch (err) {
        if (tooLarge(err)) throw new VaultCallError({ type: 'too-large', limit: maxResponseBytes });
        throw err;
      }
      const location = res.headers['location'];
      const step = redirectStep(url, res.status, typeof location === 'string' ? location : undefined, followed);
      if (step.kind === 'refuse') throw new VaultCallError(step.failure);
      // A throttling vault's Retry-After is in the headers, which node-vault drops: keep it here.
      if (step.kind === 'answer' && res.status === 429)
        throw new VaultCallError(throttledFailure(res.headers, res.data));
      if (step.kind === 'answer') return { statusCode: res.status, body: res.data, request: { path: url.pathname } };
      url = step.url;
    }
  };
  return {
    defaults: () => send,
    destroy: () => {
      httpsAgent.destroy();
      httpAgent.destroy();
    },
  };
}
