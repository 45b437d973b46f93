import { fromKubeError } from './api-errors.js';
import type { KubeApi } from './client/kube-api.js';
import type { TokenRequest } from './client/types.js';
import { corePath } from './resource-paths.js';

/** What one token is asked for: a service account, one audience, a lifetime, maybe a pod to bind it to. */
export interface TokenSpec {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly audience: string;
  readonly expirationSeconds?: number | undefined;
  readonly boundPod?: { readonly name: string; readonly uid: string } | undefined;
}

/** A minted token and when it expires (RFC 3339). */
export interface MintedToken {
  readonly token: string;
  readonly expirationTimestamp: string;
}

interface CachedToken extends MintedToken {
  readonly refreshAt: number;
}

/** Tokens are renewed after this fraction of their lifetime, as kubelet does. */
const RENEW_FRACTION = 0.8;

function keyOf(spec: TokenSpec): string {
  return [
    spec.boundPod?.uid ?? '',
    spec.namespace,
    spec.serviceAccount,
    spec.audience,
    spec.expirationSeconds ?? '',
  ].join('|');
}

/**
 * Mints service-account tokens through the TokenRequest API and caches each until 80% of
 * its lifetime. Shared by the driver (pod-bound tokens) and the SecretSync controller
 * (unbound tokens for spec.serviceAccountName). Tokens are never logged.
 */
export class TokenRequests {
  private readonly tokens = new Map<string, CachedToken>();
  /** Mints in flight: callers asking for the same token meanwhile wait for the same request. */
  private readonly minting = new Map<string, Promise<MintedToken>>();

  constructor(
    private readonly api: Pick<KubeApi, 'create'>,
    private readonly now: () => number,
  ) {}

  /**
   * A cached token for `spec`, or a new one when none is cached or it is due for renewal
   * (one TokenRequest for callers asking at the same time).
   */
  async token(spec: TokenSpec): Promise<MintedToken> {
    const key = keyOf(spec);
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.refreshAt) return cached;
    const pending = this.minting.get(key);
    if (pending) return pending;
    const minted = this.mint(key, spec).finally(() => this.minting.delete(key));
    this.minting.set(key, minted);
    return minted;
  }

  private async mint(key: string, spec: TokenSpec): Promise<MintedToken> {
    const issued = this.now();
    let res: TokenRequest;
    try {
      res = await this.api.create<TokenRequest>(
        corePath('serviceaccounts', spec.namespace, spec.serviceAccount, 'token'),
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            audiences: [spec.audience],
            ...(spec.expirationSeconds ? { expirationSeconds: spec.expirationSeconds } : {}),
            ...(spec.boundPod
              ? { boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: spec.boundPod.name, uid: spec.boundPod.uid } }
              : {}),
          },
        },
      );
    } catch (err) {
      throw fromKubeError(
        err,
        `request a token for ServiceAccount ${spec.namespace}/${spec.serviceAccount} (audience ${spec.audience})`,
      );
    }
    const expires = new Date(res.status?.expirationTimestamp ?? issued + 3600_000).getTime();
    const token: CachedToken = {
      token: res.status?.token ?? '',
      expirationTimestamp: new Date(expires).toISOString(),
      refreshAt: issued + (expires - issued) * RENEW_FRACTION,
    };
    this.tokens.set(key, token);
    return token;
  }

  /** Drops cached tokens bound to pods not in `podUids` (unbound tokens stay). */
  retainBound(podUids: ReadonlySet<string>): void {
    for (const key of this.tokens.keys()) {
      const uid = key.split('|')[0] ?? '';
      if (uid !== '' && !podUids.has(uid)) this.tokens.delete(key);
    }
  }

  /** Drops the cached tokens for which `keep` says no (e.g. of SecretSyncs that are gone). */
  retain(keep: (spec: Pick<TokenSpec, 'namespace' | 'serviceAccount'>) => boolean): void {
    for (const key of this.tokens.keys()) {
      const [, namespace = '', serviceAccount = ''] = key.split('|');
      if (!keep({ namespace, serviceAccount })) this.tokens.delete(key);
    }
  }
}
