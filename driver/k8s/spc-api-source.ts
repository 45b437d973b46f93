import { makeInformer, type Informer, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { SscError } from '../../proto/runtime/errors.js';
import type { Logger } from '../../proto/runtime/logger.js';
import type { Sleep } from '../provider-client/retry.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import { parseSecretProviderClass, type SecretProviderClass } from '../spc/secret-provider-class.js';
import { fromKubeError, httpStatusOf } from './api-errors.js';
import { SECRETS_STORE_GROUP, SECRETS_STORE_VERSION, SPC_PLURAL } from './constants.js';
import type { KubeClients } from './kube-clients.js';

/** Wait before re-listing after the watch failed. */
const RESTART_DELAY_MS = 5000;

/**
 * SecretProviderClasses from the API (SPEC 4), read from the pod's namespace only.
 * A list+watch cache answers most lookups; a miss falls through to a direct GET, so a
 * class created just after its pod (upstream #1436) is found on kubelet's retry
 * before the watch event arrives.
 */
export class ApiSecretProviderClassSource implements SecretProviderClassSource {
  private informer: (Informer<KubernetesObject> & ObjectCache<KubernetesObject>) | undefined;
  private synced = false;
  private everListed = false;
  private readonly changeListeners: ((spc: KubernetesObject) => void)[] = [];

  /** Calls `listener` whenever a class is added or updated (rotation wakes on refresh requests). */
  onChange(listener: (spc: KubernetesObject) => void): void {
    this.changeListeners.push(listener);
  }
  private stopped = false;

  constructor(private readonly clients: KubeClients, private readonly logger: Logger, private readonly sleep: Sleep) {}

  /**
   * Starts the cache in the background: lists, then watches; after any failure (API
   * unreachable at start, a broken watch) it relists every 5 s until stop(). Lookups work
   * meanwhile through direct GETs.
   */
  start(): void {
    const path = `/apis/${SECRETS_STORE_GROUP}/${SECRETS_STORE_VERSION}/${SPC_PLURAL}`;
    const informer = makeInformer(this.clients.config, path, () => this.clients.custom.listClusterCustomObject({
      group: SECRETS_STORE_GROUP, version: SECRETS_STORE_VERSION, plural: SPC_PLURAL,
    }) as never);
    // client-node's ListWatch reports a failed list or a broken watch here and stops; it
    // re-watches by itself only after a clean end. So every error schedules a relist.
    informer.on('error', (err: unknown) => {
      this.synced = false;
      if (this.stopped) return;
      this.logger.warn('SecretProviderClass list/watch failed; relisting', { error: fromKubeError(err, 'list and watch SecretProviderClasses').message, retryInMs: RESTART_DELAY_MS });
      void this.sleep(RESTART_DELAY_MS).then(() => this.listAndWatch());
    });
    const notify = (obj: KubernetesObject) => { for (const l of this.changeListeners) l(obj); };
    informer.on('update', notify);
    informer.on('add', notify);
    this.informer = informer;
    void this.listAndWatch();
  }

  private async listAndWatch(): Promise<void> {
    const informer = this.informer;
    if (this.stopped || !informer) return;
    let failed = false;
    const onError = () => { failed = true; };
    informer.on('error', onError);
    try {
      await informer.start();
    } catch (err) {
      // A watch that cannot even start rejects instead of calling the error handlers.
      failed = true;
      this.synced = false;
      this.logger.warn('SecretProviderClass watch failed to start; relisting', { error: fromKubeError(err, 'watch SecretProviderClasses').message, retryInMs: RESTART_DELAY_MS });
      void this.sleep(RESTART_DELAY_MS).then(() => this.listAndWatch());
    } finally {
      informer.off('error', onError);
    }
    if (this.stopped) {
      // stop() during the list: client-node would still open the watch afterwards.
      await informer.stop();
      return;
    }
    if (!failed) {
      this.synced = true;
      this.everListed = true;
      this.logger.info('SecretProviderClass cache synced');
    }
  }

  /**
   * True once the cache has listed at least once (Probe and /healthz). A later watch
   * failure does not clear it: liveness must not restart the driver during an API outage,
   * since lookups still work through direct GETs once the API is back.
   */
  get ready(): boolean {
    return this.everListed;
  }

  /** True while the cache is listed and watching (false during relists). */
  get fresh(): boolean {
    return this.synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer?.stop();
  }

  async get(namespace: string, name: string): Promise<SecretProviderClass> {
    const cached = this.informer?.get(name, namespace);
    return parseSecretProviderClass(cached ?? await this.fetch(namespace, name), namespace);
  }

  private async fetch(namespace: string, name: string): Promise<unknown> {
    try {
      return await this.clients.custom.getNamespacedCustomObject({ group: SECRETS_STORE_GROUP, version: SECRETS_STORE_VERSION, namespace, plural: SPC_PLURAL, name });
    } catch (err) {
      if (httpStatusOf(err) === 404) {
        throw new SscError('not-found', `SecretProviderClass ${namespace}/${name} not found`, { reason: 'SecretProviderClassNotFound' });
      }
      throw fromKubeError(err, `get SecretProviderClass ${namespace}/${name}`);
    }
  }
}
