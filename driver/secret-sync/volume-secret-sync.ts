import { toSscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import type { Sleep } from '../../lib/sleep.js';
import { KeyedQueue } from '../../lib/concurrency.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import type { SecretObject, SecretProviderClass } from '../spc/secret-provider-class.js';
import { syncRetryDelayMs } from './sync-backoff.js';
import type { OwnerReference } from '../k8s/client/types.js';
import { MANAGED_LABEL, ON_OBJECT_REMOVED_ANNOTATION } from '../k8s/constants.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import type { SecretSyncer } from './secret-sync.js';

/** A mounted volume whose class may list secretObjects, and who owns its Secrets. */
export interface SyncedVolume {
  readonly pod: PodRef;
  readonly targetPath: string;
  readonly spc: SecretProviderClass;
  /** This pod's owners for the Secrets (secretOwners in publish-hooks.ts). */
  readonly owners: readonly OwnerReference[];
  /** What the pod status object's secretSyncError holds, when the caller knows ("" right after it rewrote the status). */
  readonly recordedError?: string | undefined;
}

/**
 * Why a sync runs: `publish` (a NodePublishVolume that mounted or wrote new content),
 * `republish` (one that found the content unchanged: kubelet's periodic republishes),
 * `rotation` (a refresh that changed the files), `retry` (backoff after a failure),
 * `resync` (the periodic check).
 */
export type SyncTrigger = 'publish' | 'republish' | 'rotation' | 'retry' | 'resync';

/** Triggers that report every problem; the others report only a changed one (no event per kubelet republish). */
const REPORTS_ALWAYS: ReadonlySet<SyncTrigger> = new Set(['publish', 'rotation']);
/** Triggers whose caller knows what the pod status object holds (it just wrote or read it). */
const KNOWS_STATUS: ReadonlySet<SyncTrigger> = new Set(['publish', 'republish', 'rotation']);
/**
 * Triggers that run outside the publish lock: the volume may have been unpublished since
 * it was listed (a re-sync round, or a retry whose NodeUnpublishVolume raced it), so they
 * check the mount first.
 */
const IN_BACKGROUND: ReadonlySet<SyncTrigger> = new Set(['retry', 'resync']);

/** What VolumeSecretSync needs; each a narrow port. */
export interface VolumeSecretSyncDeps {
  readonly secrets: Pick<SecretSyncer, 'sync'>;
  readonly events: EventRecorder;
  /** Writes status.secretSyncError of the volume's pod status object ("" clears it). */
  readonly recordError: (pod: PodRef, spcName: string, message: string) => Promise<void>;
  /** The class as it is now: a retry picks up a fixed objectName without a new publish. */
  readonly classes: SecretProviderClassSource;
  /** Whether the target is still mounted: background syncs (retries, re-syncs) of an unmounted one stop. */
  readonly isMounted: (targetPath: string) => Promise<boolean>;
  /** A Secret was created or updated (sync_k8s_secret_total, k8s_secret_duration_sec). */
  readonly synced: (provider: string, seconds: number) => void;
  readonly logger: Logger;
  readonly sleep: Sleep;
  /** In [0, 1): the retry jitter. */
  readonly random: () => number;
  /** The mounted targets: one it forgets (NodeUnpublishVolume) stops retrying here too. */
  readonly targets: TargetLifecycle;
}

/** A running backoff loop for one volume. */
interface Retry {
  readonly abort: AbortController;
  /** The latest view of the volume (a publish while retrying updates it). */
  volume: SyncedVolume;
  done: Promise<void>;
}

/** What is remembered per target path while the volume is mounted. */
interface VolumeState {
  /** The problem last reported per Secret name (its message, or `conflict`). */
  readonly reported: Map<string, string>;
  /** What this driver last wrote to status.secretSyncError. */
  recorded?: string;
  retry?: Retry;
  /** Set by forget(): an attempt still running reports nothing more. */
  forgotten: boolean;
}

/**
 * Syncs a volume's Secrets and owns what happens when that fails: the
 * mount stands; a Warning FailedToCreateSecret names the cause, status.secretSyncError
 * records it, and the sync is retried with backoff (1s doubling to 5m, jittered) until
 * it succeeds (the error is then cleared) or NodeUnpublishVolume or shutdown cancels it.
 * A publish that mounted or changed content reports every problem; kubelet republishes,
 * retries and re-syncs only a changed one (no event storm).
 */
export class VolumeSecretSync {
  private readonly volumes = new Map<string, VolumeState>();
  /** One sync at a time per target path: a retry never races a publish's sync. */
  private readonly queue = new KeyedQueue();
  private stopped = false;

  constructor(private readonly deps: VolumeSecretSyncDeps) {
    deps.targets.onForgotten((targetPath) => this.forget(targetPath));
  }

  /** Syncs the volume's Secrets now; never throws. True when none failed. */
  async sync(volume: SyncedVolume, trigger: Exclude<SyncTrigger, 'retry'>): Promise<boolean> {
    if (this.stopped) return false;
    const state = this.stateOf(volume.targetPath);
    let ok = false;
    await this.queue.run(volume.targetPath, async () => {
      ok = (await this.stillMounted(state, volume.targetPath, trigger))
        ? await this.attempt(volume, trigger, state)
        : true;
    });
    if (ok) this.cancelRetry(state);
    else this.ensureRetry(state, volume);
    return ok;
  }

  /** True while a failed sync of this target is being retried (the periodic resync leaves it to that). */
  isRetrying(targetPath: string): boolean {
    return this.volumes.get(targetPath)?.retry !== undefined;
  }

  /** NodeUnpublishVolume: stop retrying and forget what was reported. */
  forget(targetPath: string): void {
    const state = this.volumes.get(targetPath);
    if (!state) return;
    state.forgotten = true;
    this.cancelRetry(state);
    this.volumes.delete(targetPath);
  }

  /** Driver shutdown: cancels every retry and waits for attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    const loops = [...this.volumes.values()].map((s) => s.retry?.done);
    for (const state of this.volumes.values()) this.cancelRetry(state);
    await Promise.all(loops);
  }

  /**
   * False (and the volume forgotten) when a background sync finds the target unmounted:
   * it must neither report on nor retry for a volume kubelet has unpublished, and the
   * state a re-sync created after forget() must not stay behind.
   */
  private async stillMounted(state: VolumeState, targetPath: string, trigger: SyncTrigger): Promise<boolean> {
    if (!IN_BACKGROUND.has(trigger)) return true;
    if (state.forgotten) return false;
    if (await this.deps.isMounted(targetPath).catch(() => true)) return true;
    if (this.volumes.get(targetPath) === state) this.forget(targetPath);
    else state.forgotten = true;
    return false;
  }

  private stateOf(targetPath: string): VolumeState {
    let state = this.volumes.get(targetPath);
    if (!state) {
      state = { reported: new Map(), forgotten: false };
      this.volumes.set(targetPath, state);
    }
    return state;
  }

  private cancelRetry(state: VolumeState): void {
    state.retry?.abort.abort();
    state.retry = undefined;
  }

  private ensureRetry(state: VolumeState, volume: SyncedVolume): void {
    if (this.stopped || state.forgotten) return;
    if (state.retry) {
      state.retry.volume = volume;
      return;
    }
    const retry: Retry = { abort: new AbortController(), volume, done: Promise.resolve() };
    state.retry = retry;
    retry.done = this.retryLoop(state, retry);
  }

  private async retryLoop(state: VolumeState, retry: Retry): Promise<void> {
    const { signal } = retry.abort;
    for (let n = 0; !signal.aborted; n++) {
      try {
        await this.deps.sleep(syncRetryDelayMs(n, this.deps.random()), signal);
      } catch {
        break;
      }
      const { volume } = retry;
      const spc = await this.deps.classes.get(volume.pod.namespace, volume.spc.name).catch(() => volume.spc);
      let ok = false;
      let mounted = true;
      await this.queue.run(volume.targetPath, async () => {
        if (signal.aborted) return;
        mounted = await this.stillMounted(state, volume.targetPath, 'retry');
        if (mounted) ok = await this.attempt({ ...volume, spc }, 'retry', state);
      });
      if (!mounted) break;
      if (ok) {
        this.deps.logger.info('Secret sync succeeded after retrying', {
          pod: `${volume.pod.namespace}/${volume.pod.name}`,
          spc: spc.name,
          retries: n + 1,
        });
        break;
      }
    }
    if (state.retry === retry) state.retry = undefined;
  }

  /** One pass over the class's secretObjects; reports, then records the outcome on the pod status object. */
  private async attempt(volume: SyncedVolume, trigger: SyncTrigger, state: VolumeState): Promise<boolean> {
    const failures: string[] = [];
    for (const object of volume.spc.secretObjects) {
      const problem = await this.syncOne(volume, object, trigger);
      if (problem === undefined) {
        state.reported.delete(object.secretName);
        continue;
      }
      if (problem.failure) failures.push(problem.message);
      if (state.forgotten) continue;
      const isNew = state.reported.get(object.secretName) !== problem.message;
      state.reported.set(object.secretName, problem.message);
      if (isNew || REPORTS_ALWAYS.has(trigger)) await this.report(volume, object, problem, trigger);
    }
    if (!state.forgotten) await this.recordOutcome(volume, trigger, state, failures.join('; '));
    return failures.length === 0;
  }

  /** Syncs one Secret; undefined when it is in place, else the problem (a conflict is not a failure: nothing to retry). */
  private async syncOne(
    volume: SyncedVolume,
    object: SecretObject,
    trigger: SyncTrigger,
  ): Promise<{ message: string; failure: boolean } | undefined> {
    const { pod, spc } = volume;
    const started = performance.now();
    try {
      const outcome = await this.deps.secrets.sync(
        pod,
        volume.targetPath,
        object,
        volume.owners,
        spc.annotations[ON_OBJECT_REMOVED_ANNOTATION] === 'remove',
      );
      if (outcome === 'created' || outcome === 'updated')
        this.deps.synced(spc.provider, (performance.now() - started) / 1000);
      if (outcome === 'updated' && trigger === 'rotation') {
        await this.deps.events.event(
          pod,
          'Normal',
          'SecretRotationComplete',
          `Secret ${pod.namespace}/${object.secretName} updated with rotated content from SecretProviderClass ${spc.name}`,
        );
      }
      if (outcome === 'created' && (trigger === 'retry' || trigger === 'resync')) {
        this.deps.logger.info('Secret re-created from the mounted files', {
          secretName: `${pod.namespace}/${object.secretName}`,
          trigger,
        });
      }
      if (outcome !== 'conflict') return undefined;
      return {
        failure: false,
        message:
          `Secret ${pod.namespace}/${object.secretName} exists and is not managed by the Secrets ` +
          `Store CSI driver (no ${MANAGED_LABEL}=true label); it was left unchanged`,
      };
    } catch (err) {
      const e = toSscError(err);
      this.deps.logger.warn('Secret sync failed', {
        secretName: `${pod.namespace}/${object.secretName}`,
        pod: `${pod.namespace}/${pod.name}`,
        trigger,
        reason: e.reason,
        error: e.message,
      });
      return { failure: true, message: `failed to sync Secret ${pod.namespace}/${object.secretName}: ${e.message}` };
    }
  }

  private async report(
    volume: SyncedVolume,
    object: SecretObject,
    problem: { message: string; failure: boolean },
    trigger: SyncTrigger,
  ): Promise<void> {
    const { pod } = volume;
    if (!problem.failure) {
      await this.deps.events.event(pod, 'Warning', 'SecretOwnershipConflict', problem.message);
      return;
    }
    await this.deps.events.event(pod, 'Warning', 'FailedToCreateSecret', problem.message);
    if (trigger === 'rotation') {
      await this.deps.events.event(
        pod,
        'Warning',
        'SecretRotationFailed',
        `Secret ${pod.namespace}/${object.secretName} was not updated after rotation (retrying): ${problem.message}`,
      );
    }
  }

  /** Writes status.secretSyncError when it differs from what the status object holds. */
  private async recordOutcome(
    volume: SyncedVolume,
    trigger: SyncTrigger,
    state: VolumeState,
    message: string,
  ): Promise<void> {
    // A publish knows what it just wrote or read; background passes trust their own last write first.
    const recorded = KNOWS_STATUS.has(trigger)
      ? (volume.recordedError ?? state.recorded)
      : (state.recorded ?? volume.recordedError);
    if (recorded === message || (recorded === undefined && message === '')) {
      state.recorded = message;
      return;
    }
    try {
      await this.deps.recordError(volume.pod, volume.spc.name, message);
      state.recorded = message;
    } catch (err) {
      this.deps.logger.warn('could not record secretSyncError on the pod status object', {
        pod: `${volume.pod.namespace}/${volume.pod.name}`,
        error: toSscError(err).message,
      });
    }
  }
}
