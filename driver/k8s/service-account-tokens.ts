import type { PodRef } from '../publish/publish-request.js';
import { fromKubeError, httpStatusOf } from './api-errors.js';
import type { KubeApi } from './client/kube-api.js';
import type { CsiDriver, TokenRequest } from './client/types.js';
import { corePath, csiDriverPath } from './resource-paths.js';

/** This driver's CSIDriver object, or undefined when it does not exist. */
export async function readCsiDriver(api: KubeApi, driverName: string): Promise<CsiDriver | undefined> {
  try {
    return await api.get<CsiDriver>(csiDriverPath(driverName));
  } catch (err) {
    if (httpStatusOf(err) === 404) return undefined;
    throw fromKubeError(err, `get CSIDriver ${driverName}`);
  }
}

/** A cached token and when to stop using it. */
interface CachedToken {
  readonly token: string;
  readonly expirationTimestamp: string;
  readonly refreshAt: number;
}

/** How long the CSIDriver object (its tokenRequests) is trusted before re-reading it. */
const CSIDRIVER_TTL_MS = 5 * 60_000;
/** Tokens are renewed after this fraction of their lifetime, as kubelet does. */
const RENEW_FRACTION = 0.8;

/**
 * Mints the pod's service-account tokens for the audiences in the CSIDriver's
 * tokenRequests, as kubelet would for a publish (TokenRequest API, bound to the pod),
 * and caches each until 80% of its lifetime. Tokens are never logged.
 */
export class ServiceAccountTokens {
  private driver: { value: CsiDriver | undefined; readAt: number } | undefined;
  private readonly tokens = new Map<string, CachedToken>();

  constructor(
    private readonly api: KubeApi,
    private readonly driverName: string,
    private readonly now: () => number,
  ) {}

  /** The `csi.storage.k8s.io/serviceAccount.tokens` JSON, or undefined when no audience is configured. */
  async tokensFor(pod: PodRef, serviceAccount: string): Promise<string | undefined> {
    const requests = (await this.csiDriver())?.spec?.tokenRequests ?? [];
    if (requests.length === 0) return undefined;
    const out: Record<string, { token: string; expirationTimestamp: string }> = {};
    for (const r of requests) {
      const t = await this.token(pod, serviceAccount, r.audience, r.expirationSeconds);
      out[r.audience] = { token: t.token, expirationTimestamp: t.expirationTimestamp };
    }
    return JSON.stringify(out);
  }

  /** Drops cached tokens of pods that are gone. */
  retain(podUids: ReadonlySet<string>): void {
    for (const key of this.tokens.keys()) if (!podUids.has(key.split('|')[0] ?? '')) this.tokens.delete(key);
  }

  private async csiDriver(): Promise<CsiDriver | undefined> {
    if (this.driver && this.now() - this.driver.readAt < CSIDRIVER_TTL_MS) return this.driver.value;
    this.driver = { value: await readCsiDriver(this.api, this.driverName), readAt: this.now() };
    return this.driver.value;
  }

  private async token(
    pod: PodRef,
    serviceAccount: string,
    audience: string,
    expirationSeconds: number | undefined,
  ): Promise<CachedToken> {
    const key = `${pod.uid}|${serviceAccount}|${audience}`;
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.refreshAt) return cached;
    try {
      const issued = this.now();
      const res = await this.api.create<TokenRequest>(
        corePath('serviceaccounts', pod.namespace, serviceAccount, 'token'),
        {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: {
            audiences: [audience],
            ...(expirationSeconds ? { expirationSeconds } : {}),
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid },
          },
        },
      );
      const expires = new Date(res.status?.expirationTimestamp ?? issued + 3600_000).getTime();
      const token: CachedToken = {
        token: res.status?.token ?? '',
        expirationTimestamp: new Date(expires).toISOString(),
        refreshAt: issued + (expires - issued) * RENEW_FRACTION,
      };
      this.tokens.set(key, token);
      return token;
    } catch (err) {
      throw fromKubeError(
        err,
        `request a token for ServiceAccount ${pod.namespace}/${serviceAccount} (audience ${audience})`,
      );
    }
  }
}
