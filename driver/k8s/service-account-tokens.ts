import type { PodRef } from '../publish/publish-request.js';
import { fromKubeError, httpStatusOf } from './api-errors.js';
import type { KubeApi } from './client/kube-api.js';
import type { CsiDriver } from './client/types.js';
import { TokenRequests, type MintedToken } from './token-requests.js';
import { csiDriverPath } from './resource-paths.js';

/** This driver's CSIDriver object, or undefined when it does not exist. */
export async function readCsiDriver(api: KubeApi, driverName: string): Promise<CsiDriver | undefined> {
  try {
    return await api.get<CsiDriver>(csiDriverPath(driverName));
  } catch (err) {
    if (httpStatusOf(err) === 404) return undefined;
    throw fromKubeError(err, `get CSIDriver ${driverName}`);
  }
}

/** How long the CSIDriver object (its tokenRequests) is trusted before re-reading it. */
const CSIDRIVER_TTL_MS = 5 * 60_000;

/**
 * Mints the pod's service-account tokens for the audiences in the CSIDriver's
 * tokenRequests, as kubelet would for a publish (TokenRequest API, bound to the pod),
 * and caches each until 80% of its lifetime. Tokens are never logged.
 */
export class ServiceAccountTokens {
  private driver: { value: CsiDriver | undefined; readAt: number } | undefined;
  private readonly tokens: TokenRequests;

  constructor(
    private readonly api: KubeApi,
    private readonly driverName: string,
    private readonly now: () => number,
  ) {
    this.tokens = new TokenRequests(api, now);
  }

  /** The `csi.storage.k8s.io/serviceAccount.tokens` JSON, or undefined when no audience is configured. */
  async tokensFor(pod: PodRef, serviceAccount: string): Promise<string | undefined> {
    const requests = (await this.csiDriver())?.spec?.tokenRequests ?? [];
    if (requests.length === 0) return undefined;
    const out: Record<string, MintedToken> = {};
    for (const r of requests) {
      const t = await this.tokens.token({
        namespace: pod.namespace,
        serviceAccount,
        audience: r.audience,
        expirationSeconds: r.expirationSeconds,
        boundPod: pod,
      });
      out[r.audience] = { token: t.token, expirationTimestamp: t.expirationTimestamp };
    }
    return JSON.stringify(out);
  }

  /** Drops cached tokens of pods that are gone. */
  retain(podUids: ReadonlySet<string>): void {
    this.tokens.retainBound(podUids);
  }

  private async csiDriver(): Promise<CsiDriver | undefined> {
    if (this.driver && this.now() - this.driver.readAt < CSIDRIVER_TTL_MS) return this.driver.value;
    this.driver = { value: await readCsiDriver(this.api, this.driverName), readAt: this.now() };
    return this.driver.value;
  }
}
