import type { Logger } from '../../lib/logging/logger.js';
import type { DriverConfig, RotationMode } from '../config.js';
import type { DriverMetrics } from '../metrics/driver-metrics.js';
import { realSleep } from '../../lib/sleep.js';
import type { PublishFailureHook, PublishHook } from '../publish/publisher.js';
import type { VolumeSource } from '../rotation/reconciler.js';
import type { RequestRebuilder } from '../rotation/refresher.js';
import type { Mounter } from '../mount/mounter.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import { ApiVolumes } from './api-volumes.js';
import type { PodStatusItem } from '../pod-status/pod-status-item.js';
import { ApiEventRecorder, type EventRecorder } from '../k8s/event-recorder.js';
import { readCsiDriver, ServiceAccountTokens } from '../k8s/service-account-tokens.js';
import { WatchedCache } from '../k8s/watched-cache.js';
import { NamespacedWatches } from '../k8s/namespaced-watches.js';
import { WorkloadRestarter } from '../rotation/workload-restart.js';
import { connectKubeApi } from '../k8s/client/connect.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { CsiDriver, Pod, Secret } from '../k8s/client/types.js';
import { podStatusWatch, podWatch, usedSecretWatch } from './node-watches.js';
import { PodStatusWriter, recordSecretSyncError } from '../pod-status/pod-status.js';
import { kubernetesHooks } from './publish-hooks.js';
import { readLivePodMeta, SecretResync, secretResyncIntervalMs } from '../secret-sync/secret-resync.js';
import { ManagedSecretWatches } from '../secret-sync/managed-secret-watches.js';
import { readMountedFiles } from '../secret-sync/mounted-files.js';
import { SecretSyncer } from '../secret-sync/secret-sync.js';
import { VolumeSecretSync } from '../secret-sync/volume-secret-sync.js';
import { ApiSecretProviderClassSource } from './spc-api-source.js';
import { resolveRotationMode } from './rotation-mode-check.js';

/** What Kubernetes mode adds to the driver: the class source and the publish hooks. */
export interface KubernetesMode {
  readonly classes: ApiSecretProviderClassSource;
  /** This node's pods, watched when rotation is on. */
  readonly pods: WatchedCache<Pod> | undefined;
  readonly hook: PublishHook;
  readonly failureHook: PublishFailureHook;
  readonly events: EventRecorder;
  /** Rotation's view of this node's volumes: pod status objects, pods, tokens. */
  readonly volumes: VolumeSource & RequestRebuilder;
  /** Reads this driver's CSIDriver object (republish mode checks requiresRepublish). */
  readonly readCsiDriver: () => Promise<CsiDriver | undefined>;
  /** The rotation mode decided at start (never auto when rotation is on; rotation-mode-check.ts). */
  readonly rotationMode: RotationMode;
  /** Stops the watches and closes the API connections. */
  stop(): Promise<void>;
}

/**
 * How long a namespace's class and Secret watches outlive the last
 * lookup there: three rounds of the slowest loop that reads them (rotation, Secret
 * resync), at least 10 minutes, so a namespace with volumes is never dropped between rounds.
 */
export function namespaceWatchIdleMs(config: DriverConfig): number {
  return Math.max(10 * 60_000, 3 * Math.max(config.rotationPollIntervalMs, secretResyncIntervalMs(config)));
}

/**
 * This node's watched objects. Pods and pod status objects: only the rotation reconciler
 * reads them (republish mode rotates with what kubelet sends). The `used=true` Secrets of
 * the namespaces with volumes: the reconciler's nodePublishSecretRef reads and Secret sync
 * share them (synced Secrets are labelled used=true too), one watch per namespace.
 */
interface NodeWatches {
  readonly pods: WatchedCache<Pod> | undefined;
  readonly podStatuses: WatchedCache<PodStatusItem> | undefined;
  /** Undefined when neither the reconciler nor Secret sync runs. */
  readonly secrets: NamespacedWatches<Secret> | undefined;
  readonly reconciler: boolean;
}

function startNodeWatches(api: KubeApi, config: DriverConfig, logger: Logger): NodeWatches {
  const reconciler = config.enableSecretRotation && config.rotationMode === 'reconciler';
  // Secrets: only in the namespaces where a refresh or a sync read one lately.
  const secrets =
    reconciler || config.enableSecretSync
      ? new NamespacedWatches<Secret>(api, (ns) => usedSecretWatch(ns, reconciler), logger, realSleep, {
          idleMs: namespaceWatchIdleMs(config),
        })
      : undefined;
  if (!reconciler) return { pods: undefined, podStatuses: undefined, secrets, reconciler };
  // Rotation reads this node's pods from a watch (annotations, volumes) instead of a GET per refresh,
  // and the publish hook their owner references.
  const pods = new WatchedCache<Pod>(api, podWatch(config.nodeId), logger, realSleep);
  // The volumes rotation refreshes: this node's pod status objects, watched instead of listed every round.
  const podStatuses = new WatchedCache<PodStatusItem>(api, podStatusWatch(config.nodeId), logger, realSleep);
  for (const watch of [pods, podStatuses]) watch.start();
  return { pods, podStatuses, secrets, reconciler };
}

/** Secret sync (undefined with --enable-secret-sync=false): the syncs of publishes, their retries, and the periodic re-sync. */
function startSecretSync(
  api: KubeApi,
  config: DriverConfig,
  metrics: DriverMetrics,
  logger: Logger,
  deps: {
    events: EventRecorder;
    classes: ApiSecretProviderClassSource;
    mounter: Mounter;
    volumes: ApiVolumes;
    watches: NodeWatches;
    targets: TargetLifecycle;
  },
): { secretSync: VolumeSecretSync; resync: SecretResync } | undefined {
  const { events, classes, mounter, volumes, targets } = deps;
  const { pods, secrets } = deps.watches;
  if (!config.enableSecretSync || !secrets) return undefined;
  // Synced Secrets are read from watches of the namespaces with such volumes, not a GET per re-sync.
  const cache = new ManagedSecretWatches(secrets, api, logger);
  const secretSync = new VolumeSecretSync({
    targets,
    secrets: new SecretSyncer(api, logger, realSleep, readMountedFiles, cache),
    events,
    classes,
    logger,
    sleep: realSleep,
    random: Math.random,
    isMounted: (t) => mounter.isMounted(t),
    recordError: (pod, spcName, message) => recordSecretSyncError(api, pod, spcName, message),
    synced: (provider, seconds) => metrics.secretSynced(provider, seconds),
  });
  // Deleted Secrets come back and owners stay complete without a publish.
  const resync = new SecretResync({
    podStatuses: () => volumes.podStatusItems(),
    isMounted: (t) => mounter.isMounted(t),
    classes,
    podMeta: (pod) => readLivePodMeta(api, pods, pod),
    volumes: secretSync,
    intervalMs: secretResyncIntervalMs(config),
    sleep: realSleep,
    logger: logger.child({ component: 'secret-resync' }),
  });
  resync.start();
  return { secretSync, resync };
}

/** Restart-on-rotation's restarter: only when rotation is on. */
function workloadRestarter(
  api: KubeApi,
  config: DriverConfig,
  events: EventRecorder,
  logger: Logger,
): WorkloadRestarter | undefined {
  if (!config.enableSecretRotation) return undefined;
  const minIntervalMs = config.workloadRestartMinIntervalMs;
  return new WorkloadRestarter({ api, events, logger, now: () => new Date(), sleep: realSleep, minIntervalMs });
}

/** Rotation's and Secret resync's view of this node's volumes. */
function apiVolumes(
  api: KubeApi,
  config: DriverConfig,
  classes: ApiSecretProviderClassSource,
  mounter: Mounter,
  logger: Logger,
  watches: NodeWatches,
): ApiVolumes {
  return new ApiVolumes(
    api,
    classes,
    new ServiceAccountTokens(api, config.driverName, Date.now),
    mounter,
    { nodeId: config.nodeId, driverName: config.driverName, defaultIntervalMs: config.rotationPollIntervalMs },
    logger.child({ component: 'rotation' }),
    watches.pods,
    watches.reconciler ? watches.secrets : undefined,
    watches.podStatuses,
  );
}

/** The driver's API client: its user agent names the node; requests and watches feed the metrics. */
function connect(flags: DriverConfig, metrics: DriverMetrics, version: string): KubeApi {
  return connectKubeApi(flags.kubeconfig, process.env, {
    userAgent: `secrets-store-csi/${version} (${flags.nodeId})`,
    observe: (method, code) => metrics.apiRequest(method, code),
    observeWatch: metrics.watchObserver,
  });
}

/**
 * Kubernetes mode: the API client, the rotation mode (decided first), the
 * SecretProviderClass cache and the publish hooks. The hooks and Secret sync forget a
 * target when `targets` does.
 */
export async function startKubernetesMode(
  flags: DriverConfig,
  metrics: DriverMetrics,
  logger: Logger,
  mounter: Mounter,
  version: string,
  targets: TargetLifecycle,
): Promise<KubernetesMode> {
  const api = connect(flags, metrics, version);
  const k8sLogger = logger.child({ component: 'kubernetes' });
  const rotationMode = await resolveRotationMode(api, flags, logger.child({ component: 'rotation' }));
  const config: DriverConfig = Object.freeze({ ...flags, rotationMode });
  const classes = new ApiSecretProviderClassSource(api, k8sLogger, realSleep, namespaceWatchIdleMs(config));
  classes.start();
  const now = () => new Date();
  const events = new ApiEventRecorder(api, config.nodeId, k8sLogger, now);
  const watches = startNodeWatches(api, config, k8sLogger);
  const { pods, podStatuses, secrets } = watches;
  const restarter = workloadRestarter(api, config, events, k8sLogger);
  const volumes = apiVolumes(api, config, classes, mounter, k8sLogger, watches);
  const sync = startSecretSync(api, config, metrics, k8sLogger, {
    events,
    classes,
    mounter,
    volumes,
    watches,
    targets,
  });
  const podStatus = new PodStatusWriter(api, k8sLogger, (stored) => podStatuses?.remember(stored));
  const hooks = kubernetesHooks({
    api,
    nodeId: config.nodeId,
    events,
    now,
    logger: k8sLogger,
    pods,
    podStatus,
    secrets: sync?.secretSync,
    restarter,
    targets,
  });
  return {
    classes,
    pods,
    hook: hooks.hook,
    events,
    volumes,
    failureHook: hooks.failureHook,
    readCsiDriver: () => readCsiDriver(api, config.driverName),
    rotationMode,
    async stop() {
      restarter?.stop();
      await Promise.all([sync?.resync.stop(), sync?.secretSync.stop()]);
      await Promise.all([classes.stop(), pods?.stop(), secrets?.stop(), podStatuses?.stop()]);
      api.close();
    },
  };
}
