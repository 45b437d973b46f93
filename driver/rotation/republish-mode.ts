import { formatGoDuration } from '../../lib/duration.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { DriverConfig } from '../config.js';
import { REFRESH_REQUESTED_ANNOTATION, ROTATION_INTERVAL_ANNOTATION } from '../k8s/constants.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { CsiDriver } from '../k8s/client/types.js';
import type { RotationMetricsPort } from './reconciler.js';
import { rotationCompleteMessage } from './refresher.js';
import { annotatedInterval, RotationSchedule } from './schedule.js';
import { backoffKey, ClassBackoff, type BackoffOutcome } from './class-backoff.js';
import type { PodRef } from '../publish/publish-request.js';
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
  /** Backoff per class and service account (class-backoff.ts), as in reconciler mode. */
  private readonly backoff = new ClassBackoff();
  /** The backoff group of each republish let through, until it ends. */
  private readonly groups = new Map<string, string>();
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
  decide(targetPath: string, spc: SecretProviderClass, pod: PodRef): RepublishDecision {
    const now = this.deps.now();
    const handled = this.refreshHandled.get(targetPath);
    const requested = handled !== undefined && handled !== refreshRequestOf(spc);
    if (!requested && !this.schedule.isDue(targetPath, this.intervalOf(spc), now)) return 'skip';
    // Its class and service account back off (a throttled vault): this republish waits too.
    const group = backoffKey({
      namespace: spc.namespace,
      spcName: spc.name,
      serviceAccountName: pod.serviceAccountName,
    });
    if (!this.backoff.admit(group, now).call) return 'skip';
    this.started.set(targetPath, now);
    this.groups.set(targetPath, group);
    return 'rotate';
  }

  /** NodeUnpublishVolume removed the target. */
  forget(targetPath: string): void {
    this.schedule.forget(targetPath);
    this.refreshHandled.delete(targetPath);
    this.started.delete(targetPath);
    const group = this.groups.get(targetPath);
    if (group !== undefined) this.backoff.release(group);
    this.groups.delete(targetPath);
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
          `--rotation-mode=republish: CSIDriver ${this.deps.config.driverName} ` +
            `${driver ? 'has requiresRepublish: false' : 'does not exist'}, so kubelet never ` +
            `republishes and mounted volumes are not rotated; set requiresRepublish: true ` +
            `(deploy/csidriver.yaml) or use --rotation-mode=reconciler`,
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
    this.settle(request.targetPath, { ok: true }, spc, now);
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
    if (failure.origin !== 'rotation') return;
    const { request, error } = failure;
    if (error.reason === 'Cancelled') {
      this.settle(request.targetPath, undefined, failure.spc, this.deps.now());
      return;
    }
    this.schedule.record(request.targetPath, 'failed', this.deps.now());
    const outcome = { ok: false, retryAfterMs: error.retryAfterMs } as const;
    const wait = this.settle(request.targetPath, outcome, failure.spc, this.deps.now());
    if (wait !== undefined) {
      this.deps.logger.warn('rotation backs off for this class and service account', {
        spc: `${request.pod.namespace}/${request.spcName}`,
        serviceAccount: request.pod.serviceAccountName,
        reason: error.reason,
        waitMs: wait,
        pushback: error.retryAfterMs !== undefined,
      });
    }
    const { provider, rotated } = error as PublishError;
    this.deps.metrics.reconcileFailed(provider || failure.spc?.provider || '', error.reason, rotated === true);
    await this.events?.event(request.pod, 'Warning', 'MountRotationFailed', error.message);
  }

  /**
   * Ends a republish let through: its outcome settles its group's backoff (undefined: no
   * answer, the trial is released). Returns the wait a failure set.
   */
  private settle(
    targetPath: string,
    outcome: BackoffOutcome | undefined,
    spc: SecretProviderClass | undefined,
    now: number,
  ): number | undefined {
    const group = this.groups.get(targetPath);
    if (group === undefined) return undefined;
    this.groups.delete(targetPath);
    if (!outcome) {
      this.backoff.release(group);
      return undefined;
    }
    const interval = spc ? this.intervalOf(spc) : this.deps.config.rotationPollIntervalMs;
    return this.backoff.settle(group, outcome, interval, now);
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
