import { ListWatch, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../../proto/runtime/logger.js';
import type { Sleep } from '../provider-client/retry.js';
import { fromKubeError } from './api-errors.js';
import type { KubeClients } from './kube-clients.js';

/** Wait before re-listing after a list or watch failed. */
const RESTART_DELAY_MS = 5000;

/** What a WatchedCache lists and watches. */
export interface WatchedCacheSpec<T extends KubernetesObject> {
  /** What it holds, for log lines ("SecretProviderClasses"). */
  readonly what: string;
  /** API path of the collection, e.g. /api/v1/pods. */
  readonly path: string;
  readonly list: () => Promise<KubernetesListObject<T>>;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

/**
 * A list+watch cache of one kind of object that keeps itself alive: client-node's
 * ListWatch reports a failed list or a broken watch and stops (it re-watches by itself
 * only after a clean end), so every error here schedules a relist after 5 s, until stop().
 */
export class WatchedCache<T extends KubernetesObject> {
  private readonly listWatch: ListWatch<T>;
  private synced = false;
  private everListed = false;
  private stopped = false;
  private readonly listeners: ((obj: T) => void)[] = [];

  constructor(clients: KubeClients, private readonly spec: WatchedCacheSpec<T>, private readonly logger: Logger, private readonly sleep: Sleep) {
    this.listWatch = new ListWatch<T>(spec.path, new Watch(clients.config), spec.list, false, spec.labelSelector, spec.fieldSelector);
    this.listWatch.on('error', (err: unknown) => {
      this.synced = false;
      if (this.stopped) return;
      this.logger.warn(`${spec.what} list/watch failed; relisting`, { error: fromKubeError(err, `list and watch ${spec.what}`).message, retryInMs: RESTART_DELAY_MS });
      void this.sleep(RESTART_DELAY_MS).then(() => this.listAndWatch());
    });
    const notify = (obj: T) => { for (const l of this.listeners) l(obj); };
    this.listWatch.on('add', notify);
    this.listWatch.on('update', notify);
  }

  /** Starts listing and watching in the background. */
  start(): void {
    void this.listAndWatch();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.listWatch.stop();
  }

  /** The cached object, if the cache has it. */
  get(name: string, namespace: string): T | undefined {
    return this.listWatch.get(name, namespace);
  }

  /** Calls `listener` for every object added or updated. */
  onChange(listener: (obj: T) => void): void {
    this.listeners.push(listener);
  }

  /** True once listed at least once; later watch failures do not clear it. */
  get everSynced(): boolean {
    return this.everListed;
  }

  /** True while listed and watching (false during relists). */
  get fresh(): boolean {
    return this.synced;
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    let failed = false;
    const onError = () => { failed = true; };
    this.listWatch.on('error', onError);
    try {
      await this.listWatch.start();
    } catch (err) {
      // A watch that cannot even start rejects instead of calling the error handlers.
      failed = true;
      this.synced = false;
      this.logger.warn(`${this.spec.what} watch failed to start; relisting`, { error: fromKubeError(err, `watch ${this.spec.what}`).message, retryInMs: RESTART_DELAY_MS });
      void this.sleep(RESTART_DELAY_MS).then(() => this.listAndWatch());
    } finally {
      this.listWatch.off('error', onError);
    }
    if (this.stopped) {
      // stop() during the list: client-node would still open the watch afterwards.
      await this.listWatch.stop();
      return;
    }
    if (!failed) {
      this.synced = true;
      this.everListed = true;
      this.logger.info(`${this.spec.what} cache synced`);
    }
  }
}
