import { SscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { Sleep } from '../../lib/sleep.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import { parseSecretProviderClass, type SecretProviderClass } from '../spc/secret-provider-class.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { KubeObject } from '../k8s/client/types.js';
import { secretProviderClassPath } from '../k8s/resource-paths.js';
import { NamespacedWatches } from '../k8s/namespaced-watches.js';
import { classWatch } from './node-watches.js';
import { SECRETS_STORE_GROUP, SECRETS_STORE_VERSION } from '../k8s/constants.js';

/** Wait between discovery requests while the API server does not answer. */
const REACHABLE_RETRY_MS = 5000;

/**
 * SecretProviderClasses from the API, read from the pod's namespace only, and watched
 * only in the namespaces whose classes this node reads: a list+watch per namespace,
 * started by the first lookup there and stopped once no lookup touched it for `idleMs`
 * (publishes, rotation rounds and Secret resync rounds read the class of every volume, so
 * a namespace with volumes on this node stays watched). A node never holds or receives the
 * classes of other namespaces. A miss falls through to a direct GET, so a class created
 * just after its pod (upstream #1436) is found on kubelet's retry before the watch event
 * arrives, and lookups work while a namespace's first list is under way.
 */
export class ApiSecretProviderClassSource implements SecretProviderClassSource {
  private readonly watches: NamespacedWatches<KubeObject>;
  /** Set once the API server answered the class API's discovery request. */
  private reachable = false;
  private readonly abort = new AbortController();
  private checking: Promise<void> | undefined;

  constructor(
    private readonly api: KubeApi,
    private readonly logger: Logger,
    private readonly sleep: Sleep,
    idleMs: number,
  ) {
    this.watches = new NamespacedWatches(api, classWatch, logger, sleep, { idleMs });
  }

  /** Asks the API server, until it answers, whether it serves SecretProviderClasses (readiness). */
  start(): void {
    this.checking ??= this.checkReachable();
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('SecretProviderClass source stopped'));
    await this.checking;
    await this.watches.stop();
  }

  /**
   * True once the API server answered for the class API and every namespace watch has
   * listed at least once (Probe and /healthz). A later failure does not clear it: liveness
   * must not restart the driver during an API outage, since lookups still work through
   * direct GETs once the API is back.
   */
  get ready(): boolean {
    return this.reachable && this.watches.everSynced;
  }

  /** GETs the class API's discovery document (no object, any authenticated user may) every 5 s until it answers. */
  private async checkReachable(): Promise<void> {
    const path = `/apis/${SECRETS_STORE_GROUP}/${SECRETS_STORE_VERSION}`;
    while (!this.abort.signal.aborted) {
      try {
        await this.api.get(path, undefined, this.abort.signal);
        this.reachable = true;
        return;
      } catch (err) {
        if (this.abort.signal.aborted) return;
        this.logger.warn('the SecretProviderClass API is not reachable yet; retrying', {
          error: fromKubeError(err, 'discover the SecretProviderClass API').message,
          retryInMs: REACHABLE_RETRY_MS,
        });
        await this.sleep(REACHABLE_RETRY_MS, this.abort.signal).catch(() => undefined);
      }
    }
  }

  /** Namespaces whose classes are watched now. */
  get namespaces(): string[] {
    return this.watches.namespaces;
  }

  /** Calls `listener` whenever a class is added or updated (rotation wakes on refresh requests). */
  onChange(listener: (spc: KubeObject) => void): void {
    this.watches.onChange(listener);
  }

  async get(namespace: string, name: string): Promise<SecretProviderClass> {
    this.watches.ensure(namespace);
    const cached = this.watches.lookup(namespace, name)?.object;
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
