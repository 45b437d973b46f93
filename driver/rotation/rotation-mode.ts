import { formatGoDuration } from '../../lib/duration.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { DriverConfig } from '../config.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { DriverMetrics } from '../metrics/driver-metrics.js';
import { realSleep } from '../../lib/sleep.js';
import type { Mounter } from '../mount/mounter.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import type { PublishedVolume, PublishFailureHook, PublishHook, VolumePublisher } from '../publish/publisher.js';
import type { RepublishGate } from '../publish/publish-plan.js';
import { RepublishRotation, type CsiDriverReader } from './republish-mode.js';
import { LocalVolumes } from './local-volumes.js';
import { RecordIndex } from './record-store.js';
import { volumeMountSource } from '../mount/mounter.js';
import { readOwnTmpfsMountPoints } from '../mount/startup-repair.js';
import { recordOwner } from './volume-record.js';
import { RotationReconciler, type VolumeSource } from './reconciler.js';
import { PublishingRefresher, type RequestRebuilder } from './refresher.js';
import { RotationSchedule } from './schedule.js';
import { ClassBackoff } from './class-backoff.js';
import { ROTATION_INTERVAL_ANNOTATION } from '../k8s/constants.js';

/** Refreshes in flight per provider at most, so one slow vault cannot starve the others. */
const CONCURRENCY_PER_PROVIDER = 4;

/** Rotation's parts, wired before and after the publisher exists. */
export interface Rotation {
  /** Publish hooks: record every publish as a refresh (and remember local volumes). */
  readonly hooks: readonly PublishHook[];
  /** Failure hooks (republish mode reports failed rotations through them). */
  readonly failureHooks: readonly PublishFailureHook[];
  /** What a kubelet republish of a mounted volume does: the publisher asks this gate. */
  readonly republish: RepublishGate;
  /** Ends the reconciler's wait early (an on-demand refresh was requested). */
  wake(): void;
  /** Starts the loop once the publisher exists. */
  start(publisher: VolumePublisher, events: EventRecorder | undefined): void;
  stop(): Promise<void>;
}

/** Where a dir-mode driver keeps its index of recorded targets: next to its CSI socket, so per driver. */
export function recordIndexDir(socketPath: string): string {
  return `${socketPath}.volumes`;
}

/** Local mode's volume source: records in the volumes, found in tmpfs mounts or the dir-mode index. */
function localVolumes(config: DriverConfig, mounter: Mounter, logger: Logger): LocalVolumes {
  return new LocalVolumes({
    mounter,
    intervalMs: config.rotationPollIntervalMs,
    owner: recordOwner(config.driverName, config.socketPath),
    logger,
    ...(config.mountMode === 'dir'
      ? { index: new RecordIndex(recordIndexDir(config.socketPath)) }
      : { mountPoints: () => readOwnTmpfsMountPoints(volumeMountSource(config.socketPath)) }),
  });
}

/** Republish mode's Rotation: no loop, kubelet's republishes are the rounds. */
function republishRotation(
  config: DriverConfig,
  metrics: DriverMetrics,
  logger: Logger,
  csiDriver: CsiDriverReader | undefined,
  targets: TargetLifecycle,
): Rotation {
  const rotation = new RepublishRotation({
    config,
    metrics,
    logger: logger.child({ component: 'rotation' }),
    now: Date.now,
    csiDriver,
  });
  targets.onForgotten((targetPath) => rotation.forget(targetPath));
  return {
    hooks: rotation.hooks,
    failureHooks: rotation.failureHooks,
    republish: rotation,
    wake: () => undefined,
    start: (_publisher, events) => {
      void rotation.start(events);
    },
    stop: async () => undefined,
  };
}

/**
 * Builds rotation for --enable-secret-rotation. In reconciler mode (the default): the
 * reconciler loop; volumes and requests come from `api` in Kubernetes mode (pod status
 * objects), or from records kept in the volumes in local mode; either way a restarted
 * driver resumes. In republish mode: kubelet's republishes (republish-mode.ts).
 */
export function createRotation(
  config: DriverConfig,
  mounter: Mounter,
  metrics: DriverMetrics,
  logger: Logger,
  targets: TargetLifecycle,
  api?: VolumeSource & RequestRebuilder,
  csiDriver?: CsiDriverReader,
): Rotation {
  if (config.rotationMode === 'republish') return republishRotation(config, metrics, logger, csiDriver, targets);
  const interval = config.rotationPollIntervalMs;
  const schedule = new RotationSchedule();
  const log = logger.child({ component: 'rotation' });
  const source: VolumeSource & RequestRebuilder = api ?? localVolumes(config, mounter, log);
  targets.onForgotten((targetPath) => source.forget?.(targetPath));
  let reconciler: RotationReconciler | undefined;
  const recordPublish: PublishHook = async (volume: PublishedVolume) => {
    if (volume.origin !== 'kubelet') return;
    await source.notePublished?.(volume);
    if (!volume.skipped)
      schedule.record(volume.request.targetPath, volume.changed ? 'changed' : 'unchanged', Date.now());
    // A new volume of a class with its own (maybe shorter) interval than the loop is
    // sleeping for. Other new volumes are simply due one interval later: no extra round.
    if (volume.firstMount && volume.spc.annotations[ROTATION_INTERVAL_ANNOTATION] !== undefined) reconciler?.wake();
  };
  return {
    hooks: [recordPublish],
    failureHooks: [],
    republish: {
      // A kubelet republish (requiresRepublish) of a volume refreshed within the interval is a no-op.
      decide: (targetPath) => (schedule.isFresh(targetPath, interval, Date.now()) ? 'skip' : 'refresh'),
      // A skipped republish still reaches the source: local mode keeps kubelet's latest request for its refreshes.
      skippedHooks: [recordPublish],
    },
    wake: () => reconciler?.wake(),
    start(publisher, events) {
      reconciler = new RotationReconciler({
        source,
        schedule,
        backoff: new ClassBackoff(),
        metrics,
        logger: log,
        now: Date.now,
        sleep: realSleep,
        defaultIntervalMs: interval,
        concurrencyPerProvider: CONCURRENCY_PER_PROVIDER,
        refresher: new PublishingRefresher(publisher, source, events, log, config.providerTimeoutMs),
      });
      reconciler.start();
      log.info('rotation reconciler started', {
        interval: formatGoDuration(interval),
        source: api ? 'pod status objects' : 'volume records (local mode)',
      });
    },
    async stop() {
      await reconciler?.stop();
    },
  };
}
