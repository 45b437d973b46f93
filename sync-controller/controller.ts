import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import type { KubeObject, Secret } from '../driver/k8s/client/types.js';
import { corePath, secretProviderClassPath } from '../driver/k8s/resource-paths.js';
import { WatchedCache } from '../driver/k8s/watched-cache.js';
import { REFRESH_REQUESTED_ANNOTATION, ROTATION_INTERVAL_ANNOTATION } from '../driver/k8s/constants.js';
import { annotatedInterval } from '../driver/rotation/schedule.js';
import type { Logger } from '../lib/logging/logger.js';
import type { Sleep } from '../lib/sleep.js';
import type { SyncControllerMetrics } from './metrics.js';
import { reconcileSecretSync, type SyncPorts, type SyncSettings } from './reconcile.js';
import { CONTROLLER_LABEL, SECRET_SYNC_KIND, type SecretSync, secretSyncPath } from './secret-sync.js';
import { nextPollDelay, WorkQueue } from './work-queue.js';
import { pollGroupOf } from './poll-groups.js';
import { eventFor, type SyncEventSink } from './sync-events.js';

/** What the controller loop needs besides the API. */
export interface ControllerDeps {
  /** The reconcile's ports, given the class cache to read from and where to put a SecretSync just written. */
  readonly ports: (caches: SyncCaches) => SyncPorts;
  readonly settings: SyncSettings;
  readonly metrics: SyncControllerMetrics;
  readonly logger: Logger;
  readonly sleep: Sleep;
  readonly concurrency: number;
  /** 0 = no periodic re-sync. */
  readonly pollIntervalMs: number;
  readonly random: () => number;
  /** Records an event on a SecretSync (recordEvent); never throws. */
  readonly event: SyncEventSink;
}

/** What the ports read from and tell the controller's caches. */
export interface SyncCaches {
  cachedClass(namespace: string, name: string): KubeObject | undefined;
  /**
   * A managed Secret from the watch (undefined: none), when it has listed; 'unknown'
   * before, or when the Secret exists without the controller's label (then only a GET tells).
   */
  managedSecret(namespace: string, name: string): Secret | undefined | 'unknown';
  /** A Secret as the apply returned it: its watch event is the controller's own, not drift. */
  wroteSecret(secret: Secret): void;
  /** A SecretSync as the status write returned it: the next poll must see its syncHash before the watch brings it. */
  stored(ss: SecretSync): void;
}

function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/**
 * Keeps every SecretSync's Secret in line: list+watch of SecretSyncs and
 * SecretProviderClasses, a reconcile when a SecretSync's spec changes (its generation) or
 * its class changes, and a periodic re-sync per poll group (SecretSyncs sharing namespace,
 * class and service account poll together, so their identical Mounts can be one) with
 * jitter across groups; at most `concurrency` reconciles at once.
 */
export class SyncController {
  readonly syncs: WatchedCache<SecretSync>;
  readonly classes: WatchedCache<KubeObject>;
  /** Secrets with the controller's label: drift (deleted, edited) wakes their SecretSync. */
  readonly secrets: WatchedCache<Secret>;
  /** The resourceVersion of the controller's last write per Secret: its watch event is not drift. */
  private readonly ownWrites = new Map<string, string>();
  private readonly queue: WorkQueue;
  /** Per SecretSync: the generation and refresh-requested-at value last acted on. */
  private readonly generations = new Map<string, string>();
  /** Per poll group (pollGroupOf): its next poll and the interval it was armed with. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; intervalMs: number }>();
  /** Per queued SecretSync: when its reconcile was last asked for (performance.now()). */
  private readonly triggered = new Map<string, number>();
  /**
   * Per SecretSync being reconciled: the resourceVersion of the last event of its Secret
   * meanwhile ('' for a delete). Its own write's event may come before the write's answer:
   * told apart when the reconcile ends.
   */
  private readonly secretEventsWhileReconciling = new Map<string, string>();
  private readonly reconciling = new Set<string>();
  private readonly ports: SyncPorts;

  constructor(
    api: KubeApi,
    private readonly deps: ControllerDeps,
  ) {
    this.syncs = new WatchedCache<SecretSync>(
      api,
      { what: 'SecretSyncs', path: secretSyncPath() },
      deps.logger,
      deps.sleep,
    );
    this.classes = new WatchedCache<KubeObject>(
      api,
      { what: 'SecretProviderClasses', path: secretProviderClassPath() },
      deps.logger,
      deps.sleep,
    );
    this.secrets = new WatchedCache<Secret>(
      api,
      { what: 'synced Secrets', path: corePath('secrets'), labelSelector: CONTROLLER_LABEL },
      deps.logger,
      deps.sleep,
    );
    this.ports = deps.ports({
      cachedClass: (namespace, name) => this.classes.get(name, namespace),
      managedSecret: (namespace, name) => this.managedSecret(namespace, name),
      wroteSecret: (secret) => {
        this.ownWrites.set(keyOf(secret), secret.metadata?.resourceVersion ?? '');
        this.secrets.remember(secret);
      },
      stored: (ss) => this.syncs.remember(ss),
    });
    this.queue = new WorkQueue(deps.concurrency, (key) => this.reconcile(key, this.takeTrigger(key)));
  }

  /** True once both caches listed: /readyz. */
  get ready(): boolean {
    return this.syncs.everSynced && this.classes.everSynced && this.secrets.everSynced;
  }

  /**
   * Starts the watches; reconciles start once all three caches have listed (what the first
   * lists queue runs as one round: one Mount per group), then follow as objects change.
   */
  start(): void {
    this.queue.hold();
    for (const cache of [this.syncs, this.classes, this.secrets])
      cache.onListed(() => {
        if (this.ready) this.queue.release();
      });
    this.syncs.onChange((ss) => this.syncChanged(ss));
    this.classes.onChange((cls) => this.classChanged(cls));
    this.secrets.onChange((secret) => this.secretChanged(secret, secret.metadata?.resourceVersion ?? ''));
    this.secrets.onDelete((secret) => this.secretChanged(secret, ''));
    this.syncs.start();
    this.classes.start();
    this.secrets.start();
  }

  /** Stops watching and polling; resolves when running reconciles have ended. */
  async stop(): Promise<void> {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.queue.stop();
    await Promise.all([this.syncs.stop(), this.classes.stop(), this.secrets.stop()]);
  }

  private syncChanged(ss: SecretSync): void {
    const key = keyOf(ss);
    // Status writes (ours included) change no generation: only spec changes reconcile, or
    // a new value of the on-demand refresh annotation (as the driver's).
    const seen = `${ss.metadata?.generation ?? 0}|${ss.metadata?.annotations?.[REFRESH_REQUESTED_ANNOTATION] ?? ''}`;
    if (this.generations.get(key) === seen) return;
    this.generations.set(key, seen);
    this.enqueue(key);
  }

  private classChanged(cls: KubeObject): void {
    const namespace = cls.metadata?.namespace;
    for (const ss of this.syncs.values())
      if (ss.metadata?.namespace === namespace && ss.spec?.secretProviderClassName === cls.metadata?.name)
        this.enqueue(keyOf(ss));
  }

  /**
   * Queues a reconcile. `fresh`: its provider data must come from a Mount started from now on
   * (a spec change, refresh, class change or poll); otherwise (a Secret changed out of band)
   * a kept answer will do, unless a fresh reconcile is already waiting.
   */
  private enqueue(key: string, fresh = true): void {
    if (fresh) this.triggered.set(key, performance.now());
    else if (!this.triggered.has(key)) this.triggered.set(key, -Infinity);
    this.queue.add(key);
  }

  /** When the reconcile about to run was last asked for (added again while it runs: the next run's). */
  private takeTrigger(key: string): number {
    const at = this.triggered.get(key) ?? performance.now();
    this.triggered.delete(key);
    return at;
  }

  private managedSecret(namespace: string, name: string): Secret | undefined | 'unknown' {
    if (!this.secrets.everSynced) return 'unknown';
    return this.secrets.get(name, namespace) ?? 'unknown';
  }

  /** A managed Secret changed or went away: its SecretSync checks it, unless the change was the controller's own write. */
  private secretChanged(secret: Secret, resourceVersion: string): void {
    if (resourceVersion !== '' && this.ownWrites.get(keyOf(secret)) === resourceVersion) return;
    const owner = (secret.metadata?.ownerReferences ?? []).find((o) => o.kind === SECRET_SYNC_KIND);
    if (!owner || !this.syncs.get(owner.name, secret.metadata?.namespace ?? '')) return;
    const key = `${secret.metadata?.namespace ?? ''}/${owner.name}`;
    if (this.reconciling.has(key)) this.secretEventsWhileReconciling.set(key, resourceVersion);
    else this.enqueue(key, false);
  }

  /** The reconcile of `key` ended: a Secret event meanwhile that was not its own write wakes it again. */
  private secretEventsSeen(key: string): void {
    this.reconciling.delete(key);
    const seen = this.secretEventsWhileReconciling.get(key);
    this.secretEventsWhileReconciling.delete(key);
    if (seen !== undefined && (seen === '' || seen !== this.ownWrites.get(key))) this.enqueue(key, false);
  }

  /** The flag's interval, or the class's `rotation-poll-interval` annotation (as the driver honours it). */
  private pollIntervalOf(ss: SecretSync): number {
    const namespace = ss.metadata?.namespace ?? '';
    const className = ss.spec?.secretProviderClassName ?? '';
    const raw = this.classes.get(className, namespace)?.metadata?.annotations?.[ROTATION_INTERVAL_ANNOTATION];
    const { ms, invalid } = annotatedInterval(raw, this.deps.pollIntervalMs);
    if (invalid)
      this.deps.logger.warn('ignoring an invalid rotation interval annotation', { spc: `${namespace}/${className}` });
    return ms;
  }

  /**
   * Arms the next poll of the SecretSync's group unless it is armed with the same interval:
   * the group's SecretSyncs are queued together, so their identical Mount requests meet.
   */
  private schedulePoll(ss: SecretSync): void {
    const group = pollGroupOf(ss);
    const intervalMs = this.pollIntervalOf(ss);
    const armed = this.timers.get(group);
    if (armed?.intervalMs === intervalMs) return;
    clearTimeout(armed?.timer);
    this.timers.delete(group);
    if (intervalMs <= 0) return;
    const timer = setTimeout(() => this.pollGroup(group), nextPollDelay(intervalMs, this.deps.random()));
    timer.unref();
    this.timers.set(group, { timer, intervalMs });
  }

  /** Queues every SecretSync of the group; their reconciles arm its next poll. */
  private pollGroup(group: string): void {
    this.timers.delete(group);
    for (const ss of this.syncs.values()) if (pollGroupOf(ss) === group) this.enqueue(keyOf(ss));
  }

  private async reconcile(key: string, triggeredAt: number): Promise<void> {
    this.reconciling.add(key);
    try {
      await this.reconcileOnce(key, triggeredAt);
    } finally {
      this.secretEventsSeen(key);
    }
  }

  private async reconcileOnce(key: string, triggeredAt: number): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    const ss = this.syncs.get(name, namespace);
    if (!ss || ss.metadata?.deletionTimestamp) {
      // Its group's poll finds it gone and, with no SecretSync left, is not armed again.
      this.generations.delete(key);
      // The Secret has the SecretSync's name: forget its last write too.
      this.ownWrites.delete(key);
      return;
    }
    const started = performance.now();
    try {
      const result = await reconcileSecretSync(ss, this.ports, this.deps.settings, triggeredAt);
      const { outcome } = result;
      const event = eventFor(result);
      if (event) await this.deps.event(ss, event.type, event.reason, event.message);
      const seconds = (performance.now() - started) / 1000;
      const reason = outcome.kind === 'failed' ? outcome.reason : '';
      this.deps.metrics.reconciled(outcome.kind, reason, seconds);
      if (outcome.kind === 'failed')
        this.deps.logger.warn('SecretSync not synced', { secretSync: key, reason, message: outcome.message });
      else if (outcome.kind === 'synced') this.deps.logger.info('Secret synced', { secretSync: key });
    } catch (err) {
      // Only the status write can throw: the next poll or change tries again.
      this.deps.metrics.reconciled('failed', 'StatusWriteFailed', (performance.now() - started) / 1000);
      this.deps.logger.warn('SecretSync status not written', { secretSync: key, error: (err as Error).message });
    } finally {
      this.schedulePoll(ss);
    }
  }
}
