import { lstatSync } from 'node:fs';
import { SscError, toSscError } from '../../lib/errors.js';
import type { PublishRequest } from './publish-request.js';
import type { CallLimits } from '../provider-client/client.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import type { ObjectVersion } from '../volume/payload.js';
import type { PublishedVolume, PublishFailureHook, PublishOrigin } from './publish-outcome.js';
import { planPublish, type RepublishGate } from './publish-plan.js';
import { WritePath, type WritePathDeps, type WriteProgress } from './write-path.js';

export type { PublishedVolume, PublishFailure, PublishFailureHook, PublishOrigin } from './publish-outcome.js';
export type { PublishHook } from './hook-stages.js';
export type { RepublishDecision, RepublishGate } from './publish-plan.js';
export type { ProviderPort } from './write-path.js';

/** What the publisher needs; each is a small port so tests can use real or fake parts. */
export interface PublisherDeps extends WritePathDeps {
  readonly classes: SecretProviderClassSource;
  readonly failureHooks?: readonly PublishFailureHook[];
  /** With rotation on: what a kubelet republish (requiresRepublish) of a mounted volume does. */
  readonly republish?: RepublishGate;
  /** Where the publisher learns that a target was unpublished. */
  readonly targets: TargetLifecycle;
}

/** What publishLocked learned before it failed (for metrics and failure hooks). */
interface Seen extends WriteProgress {
  spc: SecretProviderClass | undefined;
  /** Why it ran, once decided (a kubelet republish may run as a rotation). */
  origin: PublishOrigin;
  alreadyMounted: boolean;
}

/**
 * A failed publish: the error, plus the provider when the class was resolved, and whether
 * new content was written before the failure (upstream's `rotated` metric label).
 */
export class PublishError extends SscError {
  /** `stillMounted`: the target was mounted before the call and keeps its previous content. */
  constructor(
    error: SscError,
    readonly provider: string,
    readonly rotated = false,
    readonly origin: PublishOrigin = 'kubelet',
    readonly stillMounted = false,
  ) {
    super(error.kind, error.message, error.options());
  }
}

/**
 * Publishes a volume: lock the target, resolve the class, look at the target, decide
 * what to do (publish-plan.ts), then skip, or write through the write path (write-path.ts).
 * Kubelet's publishes and rotation's refreshes both come through here.
 */
export class VolumePublisher {
  private readonly writes: WritePath;

  constructor(private readonly deps: PublisherDeps) {
    this.writes = new WritePath(deps);
    deps.targets.onForgotten((targetPath) => this.forget(targetPath));
  }

  /** Forgets what it knows of a target (after NodeUnpublishVolume, or a rotation finding it gone). */
  forget(targetPath: string): void {
    this.writes.forget(targetPath);
  }

  /** Publishes `req`; errors name the pod and the SecretProviderClass. */
  async publish(
    req: PublishRequest,
    limits: CallLimits = {},
    origin: PublishOrigin = 'kubelet',
  ): Promise<PublishedVolume> {
    const context = `pod ${req.pod.namespace}/${req.pod.name}, SecretProviderClass ${req.pod.namespace}/${req.spcName}`;
    const seen: Seen = { spc: undefined, origin, alreadyMounted: false, rotated: false };
    try {
      return await this.deps.locks.withLock(req.targetPath, () => this.publishLocked(req, limits, origin, seen));
    } catch (err) {
      // A call cancelled on purpose (the driver shutting down) fails for that reason,
      // not with the symptom the cancellation caused (a cancelled provider call).
      const cause =
        limits.signal?.aborted === true && limits.signal.reason instanceof SscError
          ? limits.signal.reason
          : toSscError(err);
      const error = new PublishError(
        cause.withContext(`failed to publish volume ${req.volumeId} for ${context}`),
        seen.spc?.provider ?? '',
        seen.rotated,
        seen.origin,
        seen.alreadyMounted === true,
      );
      // A call refused because another one holds the target reports nothing: that one will.
      if (error.reason !== 'OperationInProgress') {
        for (const hook of this.deps.failureHooks ?? [])
          await hook({ request: req, spc: seen.spc, error, stillMounted: seen.alreadyMounted, origin: seen.origin });
      }
      throw error;
    }
  }

  /** Under the target's lock: decides from what it finds, then acts; `seen` records what a failure reports. */
  private async publishLocked(
    req: PublishRequest,
    limits: CallLimits,
    requested: PublishOrigin,
    seen: Seen,
  ): Promise<PublishedVolume> {
    const spc = await this.deps.classes.get(req.pod.namespace, req.spcName);
    seen.spc = spc;
    // A target that does not exist holds no volume (kubelet leaves creating it to the driver).
    const mounted = targetDirectoryExists(req.targetPath) && (await this.deps.mounter.isMounted(req.targetPath));
    seen.alreadyMounted = mounted;
    const plan = planPublish({
      requested,
      mounted,
      republish: () => this.deps.republish?.decide(req.targetPath, spc, req.pod),
      groupUnchanged: () => this.writes.groupUnchanged(req),
    });
    seen.origin = plan.origin;
    switch (plan.action) {
      case 'skip': {
        // A kubelet republish inside the rotation interval: nothing to fetch (docs/rotation.md, "Kubelet republish").
        const versions = await this.writes.mountedVersions(req.targetPath);
        const skipped = untouched(req, spc, versions, plan.origin);
        for (const hook of this.deps.republish?.skippedHooks ?? []) await hook(skipped, limits);
        return skipped;
      }
      case 'gone':
        // What this publisher remembered of the target is stale.
        this.forget(req.targetPath);
        return untouched(req, spc, [], plan.origin);
      case 'write':
        return this.writes.write(req, spc, plan, limits, seen);
    }
  }
}

/** A publish that fetched and wrote nothing. */
function untouched(
  request: PublishRequest,
  spc: SecretProviderClass,
  versions: readonly ObjectVersion[],
  origin: PublishOrigin,
): PublishedVolume {
  return { request, spc, versions, changed: false, firstMount: false, origin, skipped: true };
}

/**
 * True when the target is a directory, false when it does not exist (or a parent is no
 * directory: creating it then fails); throws for anything else. One synchronous lstat(2)
 * of a local path (a thread-pool trip costs ~100 µs).
 */
function targetDirectoryExists(targetPath: string): boolean {
  // No exception for a missing target, the usual case: making one costs ~10 µs.
  const s = lstatSync(targetPath, { throwIfNoEntry: false });
  if (s === undefined) return false;
  if (!s.isDirectory()) {
    throw new SscError(
      'failed-precondition',
      `target path ${targetPath} exists and is ${s.isSymbolicLink() ? 'a symlink' : 'not a directory'}`,
      { reason: 'InvalidTargetPath' },
    );
  }
  return true;
}
