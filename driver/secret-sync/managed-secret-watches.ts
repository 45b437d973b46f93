// Secret sync's view of the Secrets it manages (labelled managed=true), read from the
// node's per-namespace watch of `used=true` Secrets (usedSecretWatch in
// driver/kubernetes-mode/node-watches.ts): the driver labels every Secret it syncs
// used=true as well, so the watch that holds a namespace's nodePublishSecretRef Secrets
// holds its synced ones too, and a namespace costs one Secret watch, not two. Watched only
// in the namespaces with volumes on this node, never the whole cluster. Secret sync reads
// a Secret from here instead of a GET, so an unchanged re-sync round makes no API request,
// while a deleted or edited Secret is still seen (the watch's DELETED/MODIFIED events).
import type { Logger } from '../../lib/logging/logger.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { Secret } from '../k8s/client/types.js';
import { MANAGED_LABEL, USED_SECRET_LABEL } from '../k8s/constants.js';
import { corePath } from '../k8s/resource-paths.js';
import type { NamespacedWatches } from '../k8s/namespaced-watches.js';

/** What the cache can say of one Secret: it is there (`secret`), it is not (`secret` undefined), or it cannot say (undefined). */
export type CachedSecret = { readonly secret: Secret | undefined } | undefined;

/** How Secret sync uses the cache (a port: SecretSyncer's unit tests script it). */
export interface SecretCache {
  /** The Secret as last seen, when `namespace` is watched and listed; undefined when a GET must tell. */
  lookup(namespace: string, name: string): CachedSecret;
  /** A Secret this process just wrote: readers right after the write must see it. */
  remember(secret: Secret): void;
  /** Starts watching `namespace` (a volume there syncs Secrets). */
  ensure(namespace: string): void;
}

/** How long the driver goes without watching after the API refused to list Secrets (the role may be granted meanwhile). */
export const REFUSED_RETRY_MS = 10 * 60 * 1000;

/**
 * Secret sync's use of the node's Secret watches: every sync (publish, retry, re-sync
 * round) marks its namespace in use, starting the watch on first use; a watch stops once
 * no reader used its namespace for its idle time (NamespacedWatches' idleMs).
 */
export class ManagedSecretWatches implements SecretCache {
  /** When the API last refused to list Secrets (403): until REFUSED_RETRY_MS later, Secrets are read with GETs. */
  private refusedAt: number | undefined;
  /** The rights check in flight, so concurrent first uses make one request. */
  private checking: Promise<boolean> | undefined;

  constructor(
    /** The node's watches of `used=true` Secrets, shared with rotation's nodePublishSecretRef reads. */
    private readonly watches: NamespacedWatches<Secret>,
    private readonly api: Pick<KubeApi, 'get'>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  lookup(namespace: string, name: string): CachedSecret {
    const found = this.watches.lookup(namespace, name);
    return found && { secret: found.object };
  }

  remember(secret: Secret): void {
    if (secret.metadata?.labels?.[MANAGED_LABEL] === 'true') this.watches.remember(secret);
  }

  ensure(namespace: string): void {
    if (this.watches.watching(namespace)) {
      this.watches.ensure(namespace);
      return;
    }
    if (this.refusedAt !== undefined && this.now() - this.refusedAt < REFUSED_RETRY_MS) return;
    void this.start(namespace);
  }

  private async start(namespace: string): Promise<void> {
    if (!(await this.mayList(namespace)) || this.watches.watching(namespace)) return;
    this.watches.ensure(namespace);
  }

  /**
   * Whether the driver may list Secrets: asked once (one LIST of at most one object), again
   * REFUSED_RETRY_MS after a refusal. A refusal is logged once each time, naming the right.
   */
  private mayList(namespace: string): Promise<boolean> {
    this.checking ??= this.checkRight(namespace).finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async checkRight(namespace: string): Promise<boolean> {
    if (this.refusedAt === undefined && this.watches.namespaces.length > 0) return true;
    try {
      await this.api.get(corePath('secrets', namespace), { labelSelector: `${USED_SECRET_LABEL}=true`, limit: 1 });
      this.refusedAt = undefined;
      return true;
    } catch (err) {
      if (httpStatusOf(err) !== 403) return true; // the watch's own retries deal with other failures
      this.refusedAt = this.now();
      this.logger.warn(
        'Secret sync reads each synced Secret with a GET every re-sync round: the driver may not watch them',
        {
          error: fromKubeError(err, `list Secrets in ${namespace}`, 'secret-sync').message,
          retryInMs: REFUSED_RETRY_MS,
        },
      );
      return false;
    }
  }
}
