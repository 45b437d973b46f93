import type { Logger } from '../../lib/logging/logger.js';
import type { PublishedVolume } from '../publish/publisher.js';
import type { PodRef } from '../publish/publish-request.js';
import type { Sleep } from '../../lib/sleep.js';
import { forEachLimited } from '../../lib/concurrency.js';
import type { RefreshResult, RotationSchedule } from './schedule.js';
import { backoffKey, type ClassBackoff } from './class-backoff.js';

/** The backoff group of a volume: its class, read by its pod's service account. */
export function backoffKeyOf(volume: RotationVolume): string {
  return backoffKey({
    namespace: volume.pod.namespace,
    spcName: volume.spcName,
    serviceAccountName: volume.pod.serviceAccountName,
  });
}

/** A volume mounted on this node that rotation keeps fresh. */
export interface RotationVolume {
  readonly targetPath: string;
  readonly pod: PodRef;
  readonly spcName: string;
  /** Provider name, for per-provider concurrency ("" when unknown until refreshed). */
  readonly provider: string;
  /** This volume's interval (the class annotation, else --rotation-poll-interval). */
  readonly intervalMs: number;
  /** Set when someone asked for a refresh now (annotation), to run regardless of the schedule. */
  readonly refreshRequested?: boolean;
}

/** Lists the volumes mounted on this node (API objects cross-checked with mountinfo, or local records). */
export interface VolumeSource {
  list(): Promise<RotationVolume[]>;
  /** A kubelet publish of this volume succeeded (`skipped`: rotation made it a no-op). */
  notePublished?(volume: PublishedVolume): void | Promise<void>;
  /** NodeUnpublishVolume removed this target. */
  forget?(targetPath: string): void;
}

/** What one refresh did; a failure says why and whether new content got written first. */
export type RefreshReport =
  | { readonly result: Exclude<RefreshResult, 'failed'>; readonly provider: string }
  | {
      readonly result: 'failed';
      readonly provider: string;
      readonly errorType: string;
      readonly rotated: boolean;
      /** The wait the provider asked for (grpc-retry-pushback-ms), if it did. */
      readonly retryAfterMs?: number | undefined;
    };

/** Re-runs the publish path for one volume and reports on it (events are its business). */
export interface VolumeRefresher {
  refresh(volume: RotationVolume, signal: AbortSignal): Promise<RefreshReport>;
}

/** Metrics the reconciler records (upstream's rotation_reconcile_* names). */
export interface RotationMetricsPort {
  reconciled(provider: string, rotated: boolean, seconds: number): void;
  reconcileFailed(provider: string, errorType: string, rotated: boolean): void;
}

/** What one round did. */
export interface RoundReport {
  readonly volumes: number;
  readonly refreshed: number;
  readonly changed: number;
  readonly failed: number;
  /** Due volumes left for later: their class and service account back off (class-backoff.ts). */
  readonly deferred: number;
  readonly durationMs: number;
}

/** The reconciler's parts and settings. */
export interface ReconcilerDeps {
  readonly source: VolumeSource;
  readonly refresher: VolumeRefresher;
  readonly schedule: RotationSchedule;
  /** Backoff per class and service account, shared by their volumes. */
  readonly backoff: ClassBackoff;
  readonly metrics: RotationMetricsPort;
  readonly logger: Logger;
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly defaultIntervalMs: number;
  /** Refreshes in flight per provider at most. */
  readonly concurrencyPerProvider: number;
}

/** Never wake more often than this, whatever the intervals say. */
const MIN_WAKE_MS = 1000;

/**
 * The rotation loop: each round lists the node's mounted volumes and refreshes
 * the ones that are due, with bounded concurrency per provider. Rounds never overlap:
 * a round that takes longer than the interval makes the next start right after it.
 */
export class RotationReconciler {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  /** The volumes the last round saw, for computing when to wake next. */
  private lastVolumes: readonly RotationVolume[] = [];
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;

  constructor(private readonly deps: ReconcilerDeps) {}

  /** Starts the loop in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Ends the current wait early (an on-demand refresh was requested). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.pendingWake = true; // mid-round: run another round right after this one
  }

  /** Stops the loop and waits for the round in progress to finish. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('rotation stopped'));
    await this.loop;
  }

  /** Runs one round now (the loop calls this; tests and benchmarks may too). */
  async runRound(): Promise<RoundReport> {
    const { deps } = this;
    const started = deps.now();
    const volumes = await deps.source.list();
    this.lastVolumes = volumes;
    deps.schedule.retain(new Set(volumes.map((v) => v.targetPath)));
    deps.backoff.retain(new Set(volumes.map(backoffKeyOf)));
    const due = volumes.filter((v) => v.refreshRequested || deps.schedule.isDue(v.targetPath, v.intervalMs, started));
    const counts = { changed: 0, failed: 0, deferred: 0 };
    await forEachLimited(
      due,
      (v) => v.provider,
      deps.concurrencyPerProvider,
      async (volume) => {
        if (this.abort.signal.aborted) return;
        const outcome = await this.refreshAdmitted(volume);
        if (outcome === 'changed' || outcome === 'failed' || outcome === 'deferred') counts[outcome]++;
      },
    );
    const report = { volumes: volumes.length, refreshed: due.length, ...counts, durationMs: deps.now() - started };
    if (due.length > 0) deps.logger.info('rotation round done', report);
    return report;
  }

  /** Refreshes one due volume if its backoff group lets it call now, and records the outcome. */
  private async refreshAdmitted(volume: RotationVolume): Promise<RefreshResult | 'deferred'> {
    const { deps } = this;
    const key = backoffKeyOf(volume);
    if (!deps.backoff.admit(key, deps.now()).call) return 'deferred';
    const t0 = deps.now();
    const report = await deps.refresher.refresh(volume, this.abort.signal).catch((err: unknown): RefreshReport => {
      deps.logger.error('rotation refresh failed unexpectedly', { targetPath: volume.targetPath, error: String(err) });
      return { result: 'failed', provider: volume.provider, errorType: 'Internal', rotated: false };
    });
    const now = deps.now();
    deps.schedule.record(volume.targetPath, report.result, now);
    if (report.result === 'failed') {
      deps.metrics.reconcileFailed(report.provider, report.errorType, report.rotated);
      const wait = deps.backoff.settle(key, { ok: false, retryAfterMs: report.retryAfterMs }, volume.intervalMs, now);
      deps.logger.warn('rotation backs off for this class and service account', {
        spc: `${volume.pod.namespace}/${volume.spcName}`,
        serviceAccount: volume.pod.serviceAccountName,
        reason: report.errorType,
        waitMs: wait,
        pushback: report.retryAfterMs !== undefined,
      });
    } else if (report.result === 'skipped') {
      deps.backoff.release(key);
    } else {
      if (deps.backoff.until(key) !== undefined) {
        deps.logger.info('rotation backoff over: the provider answered again', {
          spc: `${volume.pod.namespace}/${volume.spcName}`,
          serviceAccount: volume.pod.serviceAccountName,
        });
      }
      deps.backoff.settle(key, { ok: true }, volume.intervalMs, now);
      deps.metrics.reconciled(report.provider, report.result === 'changed', (now - t0) / 1000);
    }
    return report.result;
  }

  private async run(): Promise<void> {
    const { deps } = this;
    while (!this.abort.signal.aborted) {
      let wakeIn = deps.defaultIntervalMs;
      try {
        await this.runRound();
        wakeIn = this.untilNextDue();
      } catch (err) {
        deps.logger.warn('rotation round failed; retrying next interval', { error: (err as Error).message });
      }
      if (this.pendingWake) {
        this.pendingWake = false;
        continue;
      }
      const woken = new Promise<void>((resolve) => {
        this.wakeUp = resolve;
      });
      await Promise.race([deps.sleep(wakeIn, this.abort.signal).catch(() => undefined), woken]);
      this.wakeUp = undefined;
    }
  }

  /** Time until the earliest volume is due, clamped to [1 s, default interval]. */
  private untilNextDue(): number {
    const { deps } = this;
    const now = deps.now();
    let earliest = now + deps.defaultIntervalMs;
    for (const v of this.lastVolumes) {
      // A volume whose group backs off is due no sooner than the group may call again.
      const due = Math.max(deps.schedule.nextDue(v.targetPath, v.intervalMs), deps.backoff.until(backoffKeyOf(v)) ?? 0);
      earliest = Math.min(earliest, due);
    }
    return Math.min(deps.defaultIntervalMs, Math.max(MIN_WAKE_MS, earliest - now));
  }
}
