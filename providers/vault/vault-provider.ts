// The vault provider's Mount: settings for the class, the pod's token, the identity's
// session, then every object read and rendered. All or nothing: the first object that
// fails fails the Mount and no file is returned (the driver writes nothing).
// Objects making the same Vault request share one response (request-key.ts); GET reads
// go through a short-window cache per identity (read-cache.ts); answers with a lease are
// held and reused, renewed or issued anew by what the driver has mounted (leased-read.ts).
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import type {
  ProviderCallContext,
  ProviderFile,
  ProviderMountRequest,
  ProviderMountResult,
  SecretsProvider,
} from '../framework/provider.js';
import { logChangedObjects } from '../framework/object-versions.js';
import { identityKey, identityOf, type VaultIdentity } from './identity.js';
import { leaseOf } from './lease-policy.js';
import { jsonBytes, LeaseStore } from './lease-store.js';
import { readWithLease, type LeasedRead } from './leased-read.js';
import { versionKey, type HmacKey } from '../framework/hmac-version.js';
import type { VaultObject } from './objects.js';
import { ReadCache } from '../framework/read-cache.js';
import { renderObject, type RenderedObject } from './render.js';
import { SessionCache } from './session-cache.js';
import { VaultClientPool } from './client-pool.js';
import { groupByRequest } from './request-key.js';
import { boundedAll, MOUNT_CONCURRENCY } from '../framework/bounded-all.js';
import { serviceAccountToken } from '../framework/sa-token.js';
import { checkTokenSubject } from '../framework/jwt-subject.js';
import { requirePodIdentity, VAULT_TOKEN_REQUESTER } from './parameters.js';
import { mountConfig, type ProviderSettings } from './settings.js';
import { createVaultHttp } from './vault-http.js';
import type { VaultMetrics } from './vault-metrics.js';
import { VaultSession, type SecretRead, type SessionCall } from './vault-session.js';

/** A Mount's logged-in session, its identity's key and the limits of its calls. */
interface MountSession {
  readonly idKey: string;
  readonly session: VaultSession;
  readonly call: SessionCall;
}

/** Options of the vault provider beyond its settings. */
export interface VaultProviderOptions {
  /** Key of the HMAC that makes versions. */
  readonly hmacKey: Buffer;
  /** Where the provider counts cache hits, leases and logins (the provider's /metrics registry). */
  readonly metrics: VaultMetrics;
}

/** Prefixes a session error with the object it was for; kind and reason kept. */
function forObject(object: VaultObject, err: unknown): unknown {
  if (!(err instanceof SscError)) return err;
  return new SscError(
    err.kind,
    `vault provider: object ${quoted(object.objectName, 64)} (secretPath ${quoted(object.secretPath, 160)}): ${err.message}`,
    err.options(),
  );
}

/** Why a renewal did not keep a lease, safe to log: session errors are SscErrors without secrets. */
function renewFailureText(failure: unknown): string {
  if (typeof failure === 'string') return failure;
  return failure instanceof SscError ? failure.message : 'unexpected error';
}

/** Serves Mounts from HashiCorp Vault or OpenBao: one token per identity, one HTTP client per Vault and TLS setup. */
export class VaultProvider implements SecretsProvider {
  readonly name = 'vault';
  /** One session (token, mounts learnt) per identity; an evicted one lets go of its client. */
  private readonly sessions: SessionCache<VaultSession>;
  /** One HTTP client per address, namespace and TLS settings, shared by the identities using it. */
  private readonly clients: VaultClientPool;
  private readonly metrics: VaultMetrics;
  /** Dynamic secrets issued and possibly mounted, by identity, object and version. */
  private readonly leases: LeaseStore;
  /** GET reads by identity and request, reused within --read-cache-window. */
  private readonly reads: ReadCache<SecretRead>;
  /** The HMAC key, converted once (see versionKey). */
  private readonly versionKey: HmacKey;

  constructor(
    private readonly settings: ProviderSettings,
    private readonly options: VaultProviderOptions,
  ) {
    this.versionKey = versionKey(options.hmacKey);
    this.sessions = new SessionCache(settings.cacheSize);
    const limits = { maxResponseBytes: settings.maxResponseBytes };
    this.clients = new VaultClientPool((target) =>
      createVaultHttp(target.vaultAddress, target.vaultNamespace, target.tls, limits),
    );
    const metrics = options.metrics;
    this.metrics = metrics;
    this.leases = new LeaseStore({ onDrop: (reason) => metrics.leaseDropped(reason) });
    this.reads = new ReadCache<SecretRead>({
      windowMs: settings.readCacheWindowMs,
      weigh: (read) => jsonBytes(read.body),
      // An answer with a lease (database/creds/… is a GET) is one pod's credential.
      shareable: (read) => leaseOf(read.body) === undefined,
      hooks: {
        hit: () => metrics.readCacheRead('hit'),
        miss: () => metrics.readCacheRead('miss'),
        coalesced: () => metrics.readCacheRead('coalesced'),
      },
    });
  }

  /** The session of `identity` (its key `key`): the cached one, or a new one on its target's shared client. */
  private session(key: string, identity: VaultIdentity): Promise<VaultSession> {
    const hooks = { login: (result: 'success' | 'failure') => this.metrics.login(result) };
    return this.sessions.session(
      key,
      async () => new VaultSession(identity, await this.clients.handle(identity), Date.now, hooks),
    );
  }

  /** The session of the Mount's identity, logged in (or its token still valid), and the call limits. */
  private async loggedIn(
    config: ReturnType<typeof mountConfig>,
    request: ProviderMountRequest,
    ctx: ProviderCallContext,
  ): Promise<MountSession> {
    requirePodIdentity(config.pod);
    const jwt = serviceAccountToken(request.attributes, config.audience, VAULT_TOKEN_REQUESTER);
    checkTokenSubject(jwt, config.pod.namespace, config.pod.serviceAccountName, 'vault');
    const identity = identityOf(config);
    const idKey = identityKey(identity);
    const call: SessionCall = {
      jwt,
      signal: ctx.signal,
      deadlineMs: ctx.deadline?.getTime(),
      requestTimeoutMs: this.settings.requestTimeoutMs,
    };
    let session: VaultSession;
    try {
      session = await this.session(idKey, identity);
      await session.validToken(call);
    } catch (err) {
      throw err instanceof SscError ? new SscError(err.kind, `vault provider: ${err.message}`, err.options()) : err;
    }
    return { idKey, session, call };
  }

  /** Reads one request's group of objects (a lease reused, renewed or issued) and renders them. */
  private async mountGroup(
    group: ReturnType<typeof groupByRequest>[number],
    mountSignal: AbortSignal,
    { idKey, session, call }: MountSession,
    request: ProviderMountRequest,
    ctx: ProviderCallContext,
  ): Promise<{ rendered: RenderedObject[]; hold: (() => void) | undefined }> {
    const first = group.objects[0] as VaultObject;
    const groupCall: SessionCall = { ...call, signal: mountSignal };
    // PUT and POST issue: never cached nor shared between Mounts.
    const fetch = (): Promise<SecretRead> =>
      first.method === 'GET'
        ? this.reads.read(idKey, group.requestKey, (signal) => session.read(first, { ...call, signal }), mountSignal)
        : session.read(first, groupCall);
    const mounted = group.objects.map((object) => ({
      object,
      version: request.currentObjectVersions.get(object.objectName),
    }));
    let read: LeasedRead;
    try {
      read = await readWithLease(
        { store: this.leases, identityKey: idKey, now: Date.now, mounted },
        { fetch, renew: (renewal) => session.renewLease(renewal, groupCall) },
      );
    } catch (err) {
      throw forObject(first, err);
    }
    if (read.renewFailure !== undefined) {
      ctx.logger.warn('vault provider: a lease renewal did not keep the lease; issued anew', {
        objectName: first.objectName,
        error: renewFailureText(read.renewFailure),
      });
    }
    const rendered = group.objects.map((object) =>
      renderObject(object, read.data, request.permission, this.versionKey),
    );
    const lease = read.lease;
    if (!lease) return { rendered, hold: undefined };
    this.metrics.leaseServed(read.outcome);
    ctx.logger.debug('vault provider: dynamic secret', {
      objectName: first.objectName,
      outcome: read.outcome,
      expiresAt: new Date(lease.lease.expiresAtMs).toISOString(),
    });
    // Held again even when reused or renewed: the index follows the versions just returned.
    const versions = rendered.map((r, i) => ({ object: group.objects[i] as VaultObject, version: r.version.version }));
    return { rendered, hold: () => this.leases.hold(idKey, versions, lease.leaseId, lease.lease, read.data) };
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const config = mountConfig(this.settings, request.attributes);
    for (const warning of config.warnings) ctx.logger.warn(`vault provider: ${warning}`);
    const mountSession = await this.loggedIn(config, request, ctx);
    const byName = new Map<string, RenderedObject>();
    const holds: (() => void)[] = [];
    // A few calls at a time; the first failure aborts the others (bounded-all.ts).
    await boundedAll(
      groupByRequest(config.objects),
      MOUNT_CONCURRENCY,
      async (group, mountSignal) => {
        const { rendered, hold } = await this.mountGroup(group, mountSignal, mountSession, request, ctx);
        rendered.forEach((r) => byName.set(r.version.id, r));
        if (hold) holds.push(hold);
      },
      ctx.signal,
    );
    // Only once every object succeeded: a failed Mount holds nothing (its lease lapses at its TTL).
    for (const hold of holds) hold();
    const rendered = config.objects.map((object) => byName.get(object.objectName) as RenderedObject);
    const files: ProviderFile[] = rendered.map((r) => r.file);
    const objectVersions = rendered.map((r) => r.version);
    logChangedObjects(ctx.logger, request.currentObjectVersions, objectVersions);
    return { files, objectVersions };
  }
}
