import { KubeApi, type WatchObserver } from '../driver/k8s/client/kube-api.js';
import type { ApiEndpoint } from '../driver/k8s/client/kubeconfig.js';
import type { KubeList, KubeObject } from '../driver/k8s/client/types.js';
import { MANAGED_LABEL } from '../driver/k8s/constants.js';
import { NamespacedWatches } from '../driver/k8s/namespaced-watches.js';
import { corePath, secretProviderClassPath } from '../driver/k8s/resource-paths.js';
import { WatchedCache } from '../driver/k8s/watched-cache.js';
import { podStatusWatch, podWatch, usedSecretWatch } from '../driver/kubernetes-mode/node-watches.js';
import { ApiSecretProviderClassSource } from '../driver/kubernetes-mode/spc-api-source.js';
import { ManagedSecretWatches } from '../driver/secret-sync/managed-secret-watches.js';
import { createLogger } from '../lib/logging/logger.js';
import { realSleep } from '../lib/sleep.js';

/**
 * Simulated nodes for the cluster benchmark (bench/cluster.ts), to go past the ~20 real
 * drivers this machine runs. A simulated node is a driver's Kubernetes side without its
 * CSI socket, mounts or provider: its own API client (own connections, the driver's
 * kubeconfig and RBAC) and the driver's own watch classes over the driver's own watch specs
 * (driver/kubernetes-mode/node-watches.ts), for a node with volumes of one class in one
 * namespace that rotate with a nodePublishSecretRef and sync Secrets: this node's pods and
 * pod status objects, and the namespace's classes and used=true Secrets (its
 * nodePublishSecretRef Secret and the Secrets it syncs, one watch), opened as a driver opens them (discovery, a class lookup, the Secret-list rights check).
 *
 * For comparison it can also open upstream v1.6.1's cluster-wide watches (every
 * SecretProviderClass; every Secret labelled managed=true), from the current
 * resourceVersion, without the initial lists those informers make and without keeping the
 * objects: what those watches deliver, not what holding them costs.
 */

/** What a simulated node's watches delivered: events (bookmarks aside) by kind, and how many are open. */
class WatchTally implements WatchObserver {
  classes = 0;
  secrets = 0;
  other = 0;
  open = 0;

  opened(): void {
    this.open++;
  }

  closed(): void {
    this.open--;
  }

  received(path: string, type: string): void {
    if (type === 'BOOKMARK') return;
    if (path.endsWith('/secretproviderclasses')) this.classes++;
    else if (path.endsWith('/secrets')) this.secrets++;
    else this.other++;
  }

  get events(): number {
    return this.classes + this.secrets + this.other;
  }
}

const silent = createLogger({ component: 'cluster-sim', silent: true });
const NEVER_IDLE_MS = 24 * 3600_000;
const POLL_MS = 50;

/** Polls `done` until it holds; throws after `timeoutMs` saying `what`, or when `signal` aborts. */
export async function until(done: () => boolean, what: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const t0 = Date.now();
  while (!done()) {
    signal?.throwIfAborted();
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export class SimulatedNode {
  readonly tally = new WatchTally();
  private readonly api: KubeApi;
  private readonly stops: (() => Promise<void> | void)[] = [];
  private upstream: AbortController | undefined;
  private upstreamEnded: Promise<unknown>[] = [];
  /** Set by stop(): a start still under way opens nothing more. */
  private stopped = false;

  constructor(
    endpoint: ApiEndpoint,
    readonly name: string,
    readonly namespace: string,
    /** The class of its volumes, and their nodePublishSecretRef Secret (labelled used=true). */
    readonly className: string,
    readonly usedSecretName: string,
  ) {
    this.api = new KubeApi(endpoint, { userAgent: `secrets-store-csi/bench (${name})`, observeWatch: this.tally });
  }

  /** Opens the node's watch set and resolves once every watch has listed. */
  async start(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const pods = new WatchedCache(this.api, podWatch(this.name), silent, realSleep);
    const podStatuses = new WatchedCache(this.api, podStatusWatch(this.name), silent, realSleep);
    const classes = new ApiSecretProviderClassSource(this.api, silent, realSleep, NEVER_IDLE_MS);
    const secrets = new NamespacedWatches(this.api, usedSecretWatch, silent, realSleep);
    const managed = new ManagedSecretWatches(secrets, this.api, silent);
    this.stops.push(
      () => pods.stop(),
      () => podStatuses.stop(),
      () => classes.stop(),
      () => secrets.stop(),
    );
    if (this.stopped) return;
    pods.start();
    podStatuses.start();
    classes.start();
    // As a publish or rotation round does: the volume's class, its nodePublishSecretRef Secret, its synced Secrets.
    await classes.get(this.namespace, this.className);
    if (this.stopped) return;
    // Secret sync first, as a publish does: its rights check (one LIST of at most one Secret), then the watch.
    managed.ensure(this.namespace);
    secrets.ensure(this.namespace);
    await until(
      () =>
        this.stopped ||
        (pods.everSynced &&
          podStatuses.everSynced &&
          classes.ready &&
          secrets.everSynced &&
          managed.lookup(this.namespace, '-') !== undefined),
      `${this.name}: watches listed`,
      timeoutMs,
      signal,
    );
  }

  /** Adds upstream v1.6.1's two cluster-wide watches, from `resourceVersion`; resolves once the server accepted both. */
  async openUpstreamWatches(resourceVersion: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.stopped) return;
    const abort = new AbortController();
    this.upstream = abort;
    const openBefore = this.tally.open;
    const query = { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3600 };
    this.upstreamEnded = [
      this.api.watch(secretProviderClassPath(), query, () => undefined, abort.signal),
      this.api.watch(
        corePath('secrets'),
        { ...query, labelSelector: `${MANAGED_LABEL}=true` },
        () => undefined,
        abort.signal,
      ),
    ].map((p) => p.catch((err: unknown) => err));
    await until(
      () => this.stopped || this.tally.open >= openBefore + 2,
      `${this.name}: upstream's watches opened`,
      timeoutMs,
      signal,
    );
  }

  async closeUpstreamWatches(): Promise<void> {
    this.upstream?.abort(new Error('closed'));
    await Promise.all(this.upstreamEnded);
    this.upstream = undefined;
    this.upstreamEnded = [];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.closeUpstreamWatches();
    await Promise.all(this.stops.map((stop) => stop()));
    this.api.close();
  }
}

/** The collection's current resourceVersion (a watch from it sees only later changes). */
export async function currentResourceVersion(api: KubeApi, path: string): Promise<string> {
  const list = await api.get<KubeList<KubeObject>>(path, { limit: 1 });
  const rv = list.metadata?.resourceVersion;
  if (!rv) throw new Error(`no resourceVersion listing ${path}`);
  return rv;
}
