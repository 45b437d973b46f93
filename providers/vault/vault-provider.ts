// The vault provider's Mount: settings for the class, the pod's token, the identity's
// session, then every object read and rendered. All or nothing: the first object that
// fails fails the Mount and no file is returned (the driver writes nothing).
import { SscError } from '../../proto/runtime/errors.js';
import { quoted } from '../../proto/runtime/untrusted-text.js';
import type { ProviderCallContext, ProviderFile, ProviderMountRequest, ProviderMountResult, SecretsProvider } from '../framework/provider.js';
import { identityKey, identityOf, type VaultIdentity } from './identity.js';
import { hasLease } from './kv-path.js';
import { LruCache } from './lru.js';
import type { VaultObject } from './objects.js';
import { renderObject } from './render.js';
import { serviceAccountToken } from './sa-token.js';
import { mountConfig, type ProviderSettings } from './settings.js';
import { createVaultHttp, type VaultHttp } from './vault-http.js';
import { VaultSession, type SessionCall } from './vault-session.js';

/** Options of the vault provider beyond its settings. */
export interface VaultProviderOptions {
  /** Key of the HMAC that makes versions. */
  readonly hmacKey: Buffer;
  /** Timeout of one Vault call when the Mount's deadline is further away (default: the settings'). */
  readonly requestTimeoutMs?: number;
  /** Builds the client of an identity (the real node-vault one unless a test replaces it). */
  readonly createHttp?: (identity: VaultIdentity) => Promise<VaultHttp>;
}

/** Prefixes a session error with the object it was for; kind and reason kept. */
function forObject(object: VaultObject, err: unknown): unknown {
  if (!(err instanceof SscError)) return err;
  return new SscError(err.kind, `vault provider: object ${quoted(object.objectName, 64)} (secretPath ${quoted(object.secretPath, 160)}): ${err.message}`, { reason: err.reason });
}

/** Serves Mounts from HashiCorp Vault or OpenBao, one client and token per identity. */
export class VaultProvider implements SecretsProvider {
  readonly name = 'vault';
  private readonly sessions: LruCache<string, Promise<VaultSession>>;

  constructor(private readonly settings: ProviderSettings, private readonly options: VaultProviderOptions) {
    this.sessions = new LruCache(settings.cacheSize);
  }

  /** The session of `identity`: the cached one, or a new client (kept while the cache has room). */
  private session(identity: VaultIdentity): Promise<VaultSession> {
    const key = identityKey(identity);
    const cached = this.sessions.get(key);
    if (cached) return cached;
    const create = this.options.createHttp ?? ((id: VaultIdentity) => createVaultHttp(id.vaultAddress, id.vaultNamespace, id.tls, { maxResponseBytes: this.settings.maxResponseBytes }));
    const session = create(identity).then((http) => new VaultSession(identity, http));
    this.sessions.set(key, session);
    session.catch(() => { if (this.sessions.get(key) === session) this.sessions.delete(key); });
    return session;
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const config = mountConfig(this.settings, request.attributes);
    for (const warning of config.warnings) ctx.logger.warn(`vault provider: ${warning}`);
    const jwt = serviceAccountToken(request.attributes, config.audience);
    const identity = identityOf(config);
    const session = await this.session(identity);
    const call: SessionCall = {
      jwt, signal: ctx.signal, deadlineMs: ctx.deadline?.getTime(),
      requestTimeoutMs: this.options.requestTimeoutMs ?? this.settings.requestTimeoutMs,
    };
    try {
      await session.validToken(call);
    } catch (err) {
      throw err instanceof SscError ? new SscError(err.kind, `vault provider: ${err.message}`, { reason: err.reason }) : err;
    }
    const rendered = await Promise.all(config.objects.map(async (object) => {
      let read;
      try {
        read = await session.read(object, call);
      } catch (err) {
        throw forObject(object, err);
      }
      if (hasLease(read.body)) ctx.logger.debug('object has a lease; it is issued anew at every Mount', { objectName: object.objectName });
      return renderObject(object, read.data, request.permission, this.options.hmacKey);
    }));
    const files: ProviderFile[] = rendered.map((r) => r.file);
    for (const r of rendered) {
      const previous = request.currentObjectVersions.get(r.version.id);
      if (previous !== undefined && previous !== r.version.version) ctx.logger.info('object changed', { objectName: r.version.id });
    }
    return { files, objectVersions: rendered.map((r) => r.version) };
  }
}
