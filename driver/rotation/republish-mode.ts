import { formatGoDuration } from '../../lib/duration.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { DriverConfig } from '../config.js';
import { REFRESH_REQUESTED_ANNOTATION, ROTATION_INTERVAL_ANNOTATION } from '../k8s/constants.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { CsiDriver } from '../k8s/client/types.js';
import type { RotationMetricsPort } from './reconciler.js';
import { rotationCompleteMessage } from './refresher.js';
import { annotatedInterval, RotationSchedule } from './schedule.js';
import type { PublishFailureHook, PublishHook, PublishError } from '../publish/publisher.js';
import type { RepublishDecision, RepublishGate } from '../publish/publish-plan.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';

/** Reads the driver's CSIDriver object (undefined when there is none); Kubernetes mode only. */
export type CsiDriverReader = () => Promise<CsiDriver | undefined>;

/** What republish mode needs. */
export interface RepublishRotationDeps {
  readonly config: Pick<DriverConfig, 'rotationPollIntervalMs' | 'driverName'>;
  readonly metrics: RotationMetricsPort;
  readonly logger: Logger;
  readonly now: () => number;
  /** Checks at start that kubelet republishes at all (requiresRepublish); absent in local mode. */
  readonly csiDriver?: CsiDriverReader | undefined;
}

/**
 * --rotation-mode=republish: rotation rides on kubelet's periodic NodePublishVolume calls
 * (CSIDriver `requiresRepublish: true`), with the tokens and nodePublishSecretRef data
 * kubelet passes, so it needs no API rights beyond upstream's. A republish within the
 * volume's interval of its last refresh is a no-op (no provider call); a due one is
 * refreshed as a rotation: current object versions sent, nothing written when nothing
 * changed, MountRotationComplete only on change, MountRotationFailed on failure (old
 * content kept), the reconciler's backoff after failures.
 */
export class RepublishRotation implements RepublishGate {
  private readonly schedule = new RotationSchedule();
  /** The class's refresh-requested-at value at the last refresh, per target path. */
  private readonly refreshHandled = new Map<string, string>();
  /** When each due republish started (for rotation_reconcile_duration_sec). */
  private readonly started = new Map<string, number>();
  private readonly warnedInterval = new Set<string>();
  private events: EventRecorder | undefined;

  /** Publish hooks: record refreshes, report rotations. */
  readonly hooks: readonly PublishHook[];
  /** Failure hooks: report failed rotations and back off. */
  readonly failureHooks: readonly PublishFailureHook[];
  /** Run for a republish it skipped: the publish hooks, which leave such a republish alone. */
  readonly skippedHooks: readonly PublishHook[];

  constructor(private readonly deps: RepublishRotationDeps) {
    this.hooks = [(volume) => this.published(volume)];
    this.failureHooks = [(failure) => this.failed(failure)];
    this.skippedHooks = this.hooks;
  }

  /** The publisher's republish gate: `rotate` when the volume is due (or a refresh was requested on its class), else `skip`. */
  decide(targetPath: string, spc: SecretProviderClass): RepublishDecision {
    const now = this.deps.now();
    const handled = this.refreshHandled.get(targetPath);
    const requested = handled !== undefined && handled !== refreshRequestOf(spc);
    if (!requested && !this.schedule.isDue(targetPath, this.intervalOf(spc), now)) return 'skip';
    this.started.set(targetPath, now);
    return 'rotate';
  }

  /** NodeUnpublishVolume removed the target. */
  forget(targetPath: string): void {
    this.schedule.forget(targetPath);
    this.refreshHandled.delete(targetPath);
    this.started.delete(targetPath);
  }

  /** Starts reporting through `events`, and warns when kubelet is not set up to republish. */
  async start(events: EventRecorder | undefined): Promise<void> {
    this.events = events;
    const log = this.deps.logger;
    log.info('rotation on kubelet republish started', {
      interval: formatGoDuration(this.deps.config.rotationPollIntervalMs),
    });
    if (!this.deps.csiDriver) return;
    try {
      const driver = await this.deps.csiDriver();
      if (driver?.spec?.requiresRepublish !== true) {
        log.warn(
          `--rotation-mode=republish: CSIDriver ${this.deps.config.driverName} ${driver ? 'has requiresRepublish: false' : 'does not exist'}, so kubelet never republishes and mounted volumes are not rotated; set requiresRepublish: true (deploy/csidriver.yaml) or use --rotation-mode=reconciler`,
        );
      }
    } catch (err) {
      log.warn('--rotation-mode=republish: could not read the CSIDriver to check requiresRepublish', {
        error: (err as Error).message,
      });
    }
  }

  private async published(volume: Parameters<PublishHook>[0]): Promise<void> {
    if (volume.skipped) return;
    const { request, spc } = volume;
    const now = this.deps.now();
    this.refreshHandled.set(request.targetPath, refreshRequestOf(spc));
    this.schedule.record(request.targetPath, volume.changed ? 'changed' : 'unchanged', now);
    if (volume.origin !== 'rotation') return;
    this.deps.metrics.reconciled(
      spc.provider,
      volume.changed,
      (now - (this.started.get(request.targetPath) ?? now)) / 1000,
    );
    if (!volume.changed) return;
    await this.events?.event(
      request.pod,
      'Normal',
      'MountRotationComplete',
      rotationCompleteMessage(spc.name, volume.versions),
    );
    this.deps.logger.info('volume rotated', {
      pod: `${request.pod.namespace}/${request.pod.name}`,
      spc: spc.name,
      targetPath: request.targetPath,
    });
  }

  private async failed(failure: Parameters<PublishFailureHook>[0]): Promise<void> {
    // A failed first mount is kubelet's to retry (MountFailed); a shutdown is no failure.
    if (failure.origin !== 'rotation' || failure.error.reason === 'Cancelled') return;
    const { request, error } = failure;
    this.schedule.record(request.targetPath, 'failed', this.deps.now());
    const { provider, rotated } = error as PublishError;
    this.deps.metrics.reconcileFailed(provider || failure.spc?.provider || '', error.reason, rotated === true);
    await this.events?.event(request.pod, 'Warning', 'MountRotationFailed', error.message);
  }

  private intervalOf(spc: SecretProviderClass): number {
    const raw = spc.annotations[ROTATION_INTERVAL_ANNOTATION];
    const { ms, invalid } = annotatedInterval(raw, this.deps.config.rotationPollIntervalMs);
    const key = `${spc.namespace}/${spc.name}`;
    if (invalid && !this.warnedInterval.has(key)) {
      this.warnedInterval.add(key);
      this.deps.logger.warn('ignoring an invalid rotation interval annotation', {
        spc: key,
        value: (raw ?? '').slice(0, 40),
      });
    }
    return ms;
  }
}

/** The class's refresh-requested-at annotation ("" when absent). */
function refreshRequestOf(spc: SecretProviderClass): string {
  return spc.annotations[REFRESH_REQUESTED_ANNOTATION] ?? '';
}
