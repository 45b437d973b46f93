// One identity's conversation with Vault (identity.ts): its hold on a client (shared with
// the identities of the same Vault and TLS setup, client-pool.ts), its token, and what
// it learnt about mounts. Logins happen when there is no token or it is past two thirds
// of its lifetime, and once more when Vault answers 403 with a token from an earlier
// login (it may have been revoked); concurrent Mounts of the identity share one login.
import { LRUCache } from 'lru-cache';
import { callTimeoutMs } from '../framework/call-deadline.js';
import { Coalescer } from '../framework/coalescer.js';
import { ttlClock } from '../framework/lru-options.js';
import type { VaultObject } from './objects.js';
import type { VaultIdentity } from './identity.js';
import {
  deletedError,
  deletedVersion,
  parseMountInfo,
  readPlan,
  readQuery,
  secretData,
  type MountInfo,
} from './kv-path.js';
import { tokenNeedsLogin, type VaultToken } from './token-expiry.js';
import { vaultError, type VaultOperation } from './vault-errors.js';
import { VaultCallError, type VaultHttp } from './vault-http.js';
import { SscError } from '../../lib/errors.js';

/** How long what Vault said about a mount is trusted: mounts are rarely re-created with another version. */
export const MOUNT_INFO_TTL_MS = 60_000;
/** Most mounts remembered per identity, the least recently used forgotten first. */
const MAX_MOUNTS = 64;

/** Per-Mount inputs of a session call. */
export interface SessionCall {
  /** The pod's service-account token, used only if a login is needed. Never logged. */
  readonly jwt: string;
  readonly signal?: AbortSignal | undefined;
  readonly deadlineMs?: number | undefined;
  readonly requestTimeoutMs: number;
}

/** A secret read: the data a file is made from, and the whole answer (for its lease fields). */
export interface SecretRead {
  readonly data: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  /**
   * When the token that made the read expires (undefined: it does not): Vault revokes a
   * lease with the token that issued it. It is the read's own token, since read() may
   * log in again halfway.
   */
  readonly tokenExpiresAtMs: number | undefined;
}

/** Called as logins end (for a metric; it gets no identity and no secret). */
export interface SessionHooks {
  readonly login?: (result: 'success' | 'failure') => void;
}

/** Counters for tests and the log: how often this identity logged in, read and renewed. */
export interface SessionStats {
  logins: number;
  reads: number;
  renewals: number;
}

/** The Vault traffic of one identity. */
export class VaultSession {
  readonly stats: SessionStats = { logins: 0, reads: 0, renewals: 0 };
  private token: VaultToken | undefined;
  /** Logins in flight (one key: the identity's), shared by the Mounts arriving meanwhile. */
  private readonly logins = new Coalescer<VaultToken>();
  /** Mount lookups in flight, by path. */
  private readonly mountLookups = new Coalescer<MountInfo | undefined>();
  /** The JWT and deadline of the login attempt started last (never logged). */
  private loginAttempt: { readonly jwt: string; readonly deadlineMs: number | undefined } | undefined;
  /** Mounts by path, each trusted until older than MOUNT_INFO_TTL_MS (lru-cache's TTL: stale once strictly older). */
  private readonly mounts: LRUCache<string, MountInfo>;

  constructor(
    readonly identity: VaultIdentity,
    private readonly http: VaultHttp,
    private readonly now: () => number = Date.now,
    private readonly hooks: SessionHooks = {},
  ) {
    this.mounts = new LRUCache({ max: MAX_MOUNTS, ttl: MOUNT_INFO_TTL_MS, ...ttlClock(now) });
  }

  private op(action: VaultOperation['action'], path: string): VaultOperation {
    const { roleName, vaultAddress, vaultNamespace } = this.identity;
    return { action, path, roleName, vaultAddress, vaultNamespace };
  }

  private async send(
    action: VaultOperation['action'],
    call: SessionCall,
    request: { method: 'GET' | 'PUT' | 'POST'; path: string; query?: string; body?: unknown; token?: string },
  ): Promise<unknown> {
    const timeoutMs = callTimeoutMs(call.deadlineMs, this.now(), call.requestTimeoutMs);
    if (timeoutMs <= 0) throw vaultError({ type: 'deadline' }, this.op(action, request.path));
    try {
      return await this.http.call({ ...request, timeoutMs, signal: call.signal });
    } catch (err) {
      if (err instanceof VaultCallError)
        throw Object.assign(vaultError(err.failure, this.op(action, request.path)), { failure: err.failure });
      throw err;
    }
  }

  /** Lets go of its client (the session was dropped); the client closes once nobody uses it and its calls end. */
  close(): void {
    this.http.close?.();
  }

  /** A token usable now: the current one, or one from a new (shared) login with `call.jwt`. */
  async validToken(call: SessionCall): Promise<VaultToken> {
    if (this.token && !tokenNeedsLogin(this.token, this.now(), call.requestTimeoutMs)) return this.token;
    return this.login(call);
  }

  /**
   * Logs in at auth/<mount>/login with {role, jwt}, once for all callers arriving
   * meanwhile (Coalescer: the attempt is cancelled only when every caller left). The
   * attempt is made with its first caller's JWT and deadline, so a caller whose JWT
   * differs (the first pod's may be refused: a deleted pod) or whose deadline outlives
   * the attempt that timed out tries once more with its own.
   */
  private async login(call: SessionCall, retried = false): Promise<VaultToken> {
    const pending = this.logins.coalesce('login', (signal) => this.loginOnce({ ...call, signal }), call.signal);
    // Set synchronously by loginOnce when the attempt started: the attempt this caller waits on.
    const attempt = this.loginAttempt;
    try {
      return await pending;
    } catch (err) {
      if (retried || call.signal?.aborted || attempt === undefined) throw err;
      const otherJwt = attempt.jwt !== call.jwt;
      const timedOut = err instanceof SscError && err.kind === 'deadline-exceeded';
      const outlives = (call.deadlineMs ?? Infinity) > (attempt.deadlineMs ?? Infinity);
      if (!otherJwt && !(timedOut && outlives)) throw err;
      return this.login(call, true);
    }
  }

  private async loginOnce(call: SessionCall): Promise<VaultToken> {
    this.loginAttempt = { jwt: call.jwt, deadlineMs: call.deadlineMs };
    const path = `auth/${this.identity.vaultAuthMountPath}/login`;
    const started = this.now();
    this.stats.logins++;
    try {
      // Kubernetes and JWT auth take the same body; the mount's type decides which checks Vault makes.
      const body = (await this.send('login', call, {
        method: 'POST',
        path,
        body: { role: this.identity.roleName, jwt: call.jwt },
      })) as { auth?: { client_token?: unknown; lease_duration?: unknown } } | undefined;
      const clientToken = body?.auth?.client_token;
      if (typeof clientToken !== 'string' || clientToken === '') {
        throw new SscError(
          'unavailable',
          `Vault at ${this.identity.vaultAddress} answered the login at "${path}" without a token`,
          { reason: 'VaultLoginFailed' },
        );
      }
      const lease = body?.auth?.lease_duration;
      this.token = {
        clientToken,
        obtainedAtMs: started,
        leaseSeconds: typeof lease === 'number' && lease > 0 ? lease : 0,
      };
      this.hooks.login?.('success');
      return this.token;
    } catch (err) {
      this.hooks.login?.('failure');
      throw err;
    }
  }

  /** Reads `object`, logging in again once if Vault answers 403 to a token from an earlier login. */
  async read(object: VaultObject, call: SessionCall): Promise<SecretRead> {
    const before = this.token;
    const token = await this.validToken(call);
    try {
      return await this.readWith(object, call, token);
    } catch (err) {
      const failure = (err as { failure?: { type: string; status?: number } }).failure;
      // A token from a login made for this call is not retried: its 403 is the policy's answer.
      if (failure?.type !== 'status' || failure.status !== 403 || token !== before) throw err;
      if (this.token === token) this.token = undefined;
      return await this.readWith(object, call, await this.validToken(call));
    }
  }

  private async readWith(object: VaultObject, call: SessionCall, token: VaultToken): Promise<SecretRead> {
    const mount = object.method === 'GET' ? await this.mountOf(object.path, call, token) : undefined;
    const plan = readPlan(object, mount);
    this.stats.reads++;
    let body: unknown;
    try {
      body = await this.send('read', call, {
        method: object.method,
        path: plan.path,
        query: readQuery(object),
        token: token.clientToken,
        ...(object.method !== 'GET' && object.secretArgs !== undefined ? { body: object.secretArgs } : {}),
      });
    } catch (err) {
      // Vault answers a deleted or destroyed KV v2 version with 404 and its metadata.
      const failure = (err as { failure?: { type: string; status?: number; body?: unknown } }).failure;
      const deleted =
        plan.kv2Data && failure?.type === 'status' && failure.status === 404 ? deletedVersion(failure.body) : undefined;
      if (deleted) throw deletedError(object, deleted);
      throw err;
    }
    const tokenExpiresAtMs = token.leaseSeconds > 0 ? token.obtainedAtMs + token.leaseSeconds * 1000 : undefined;
    return { data: secretData(object, plan, body), body, tokenExpiresAtMs };
  }

  /**
   * Sends `PUT <path>` with `body` (sys/leases/renew, lease-policy.ts renewRequest) with
   * the identity's current token: Vault lets any token whose policies allow
   * sys/leases/renew renew a lease (the default policy does), not only the issuing one.
   */
  async renewLease(request: { readonly path: string; readonly body: unknown }, call: SessionCall): Promise<unknown> {
    const token = await this.validToken(call);
    this.stats.renewals++;
    return this.send('renew', call, {
      method: 'PUT',
      path: request.path,
      body: request.body,
      token: token.clientToken,
    });
  }

  /** The mount `path` is under, from Vault (cached briefly); undefined when Vault does not tell this token. */
  private async mountOf(path: string, call: SessionCall, token: VaultToken): Promise<MountInfo | undefined> {
    const askedAtMs = this.mounts.perf.now();
    this.mounts.purgeStale();
    let best: MountInfo | undefined;
    for (const [key, info] of this.mounts.entries()) {
      if ((path.startsWith(`${key}/`) || key === '') && (!best || key.length > best.path.length)) best = info;
    }
    if (best) {
      this.mounts.get(best.path); // now the most recently used
      return best;
    }
    // Objects looked up at once (many Mounts, a large class) share one lookup per path:
    // every token here is this identity's, so any of them may answer for the others.
    const info = await this.mountLookups.coalesce(
      path,
      (signal) => this.lookUpMount(path, { ...call, signal }, token),
      call.signal,
    );
    // Trusted from when it was asked for, as the answer may be that old.
    if (info) this.mounts.set(info.path, info, { start: askedAtMs });
    return info;
  }

  private async lookUpMount(path: string, call: SessionCall, token: VaultToken): Promise<MountInfo | undefined> {
    try {
      return parseMountInfo(
        await this.send('mount-lookup', call, {
          method: 'GET',
          path: `sys/internal/ui/mounts/${path}`,
          token: token.clientToken,
        }),
      );
    } catch (err) {
      // A token without rights on the path gets 403 here; the read then says so itself.
      if ((err as { failure?: { type: string } }).failure?.type === 'status') return undefined;
      throw err;
    }
  }
}
