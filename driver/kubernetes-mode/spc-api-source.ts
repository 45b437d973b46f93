import { SscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { Sleep } from '../../lib/sleep.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import { parseSecretProviderClass, type SecretProviderClass } from '../spc/secret-provider-class.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { KubeObject } from '../k8s/client/types.js';
import { secretProviderClassPath } from '../k8s/resource-paths.js';
import { WatchedCache } from '../k8s/watched-cache.js';

/**
 * SecretProviderClasses from the API, read from the pod's namespace only.
 * A list+watch cache answers most lookups; a miss falls through to a direct GET, so a
 * class created just after its pod (upstream #1436) is found on kubelet's retry
 * before the watch event arrives.
 */
export class ApiSecretProviderClassSource implements SecretProviderClassSource {
  private readonly cache: WatchedCache<KubeObject>;

  constructor(
    private readonly api: KubeApi,
    logger: Logger,
    sleep: Sleep,
  ) {
    this.cache = new WatchedCache(api, { what: 'SecretProviderClass', path: secretProviderClassPath() }, logger, sleep);
  }

  /** Starts the cache in the background; lookups work meanwhile through direct GETs. */
  start(): void {
    this.cache.start();
  }

  async stop(): Promise<void> {
    await this.cache.stop();
  }

  /**
   * True once the cache has listed at least once (Probe and /healthz). A later watch
   * failure does not clear it: liveness must not restart the driver during an API outage,
   * since lookups still work through direct GETs once the API is back.
   */
  get ready(): boolean {
    return this.cache.everSynced;
  }

  /** Calls `listener` whenever a class is added or updated (rotation wakes on refresh requests). */
  onChange(listener: (spc: KubeObject) => void): void {
    this.cache.onChange(listener);
  }

  async get(namespace: string, name: string): Promise<SecretProviderClass> {
    const cached = this.cache.get(name, namespace);
    return parseSecretProviderClass(cached ?? (await this.fetch(namespace, name)), namespace);
  }

  private async fetch(namespace: string, name: string): Promise<unknown> {
    try {
      return await this.api.get<unknown>(secretProviderClassPath(namespace, name));
    } catch (err) {
      if (httpStatusOf(err) === 404) {
        throw new SscError('not-found', `SecretProviderClass ${namespace}/${name} not found`, {
          reason: 'SecretProviderClassNotFound',
        });
      }
      throw fromKubeError(err, `get SecretProviderClass ${namespace}/${name}`);
    }
  }
}
