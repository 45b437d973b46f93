import { lstatSync } from 'node:fs';
import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { SscError, toSscError } from '../../lib/errors.js';
import { Pacer } from '../../lib/pacer.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PublishRequest } from './publish-request.js';
import type { CallLimits } from '../provider-client/client.js';
import { buildMountRequest, kubeletOwnedParameters } from './mount-request.js';
import { keepsMountedFiles, validateMountResponse } from './mount-response.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import { AtomicWriter } from '../volume/atomic-writer.js';
import { PublishHooks, type PublishHook } from './hook-stages.js';
import { metadataFiles, readMountedVersions, sortVersions, versionsFile } from '../volume/metadata.js';
import type { Mounter } from '../mount/mounter.js';
import { assertNoOverlap } from '../mount/nesting.js';
import type { ObjectVersion } from '../volume/payload.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import type { TargetLocks } from '../mount/target-locks.js';

/** The provider side of publishing: one Mount call. */
export interface ProviderPort {
  mount(provider: string, request: MountRequest, limits: CallLimits): Promise<MountResponse__Output>;
}

import type { PublishedVolume, PublishFailureHook, PublishOrigin, RepublishDecision } from './publish-outcome.js';

export type {
  PublishedVolume,
  PublishFailure,
  PublishFailureHook,
  PublishOrigin,
  RepublishDecision,
} from './publish-outcome.js';
export type { PublishHook } from './hook-stages.js';

/** What the publisher needs; each is a small port so tests can use real or fake parts. */
export interface PublisherDeps {
  readonly locks: TargetLocks;
  readonly classes: SecretProviderClassSource;
  readonly mounter: Mounter;
  readonly providers: ProviderPort;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Default file mode sent as `permission` and used for mode-0 files (0644). */
  readonly defaultMode?: number;
  readonly hooks?: readonly PublishHook[];
  /**
   * Run for a kubelet republish skipped as fresh (nothing fetched or written): they learn
   * kubelet's latest request (its fresh tokens, the nodePublishSecretRef data as it is
   * now), which local mode's rotation refreshes with later.
   */
  readonly skippedHooks?: readonly PublishHook[];
  readonly failureHooks?: readonly PublishFailureHook[];
  /**
   * With rotation on: decides what a kubelet republish (requiresRepublish) of a mounted
   * volume does. Without it, republishes re-fetch as kubelet publishes.
   */
  readonly republish?: (targetPath: string, spc: SecretProviderClass) => RepublishDecision;
  /** Where the publisher learns that a target was unpublished. */
  readonly targets: TargetLifecycle;
  /** The atomic writer (shared so it remembers digests of what it wrote). */
  readonly writer?: AtomicWriter<readonly ObjectVersion[]>;
}

const DEFAULT_FILE_MODE = 0o644;

/** What publishLocked learned before it failed (for metrics and failure hooks). */
interface Seen {
  spc: SecretProviderClass | undefined;
  /** Why it ran, once decided (a kubelet republish may run as a rotation). */
  origin: PublishOrigin;
  alreadyMounted: boolean;
  /** New content is in the volume, but a hook (pod status, Secret sync) then failed. */
  rotated: boolean;
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
    super(error.kind, error.message, { reason: error.reason, cause: error.cause });
  }
}

/**
 * Publishes a volume (SPEC 5): lock the target, resolve the class, mount if needed,
 * ask the provider, validate, write atomically with `.metadata`, run hooks. A failed
 * first mount leaves nothing behind; a failed re-publish keeps serving the old content.
 * Rotation re-runs this same path.
 */
export class VolumePublisher {
  /**
   * Tags each write with its object versions (ids and versions, not secrets): while
   * `..data` still points where they were written, a refresh sends them without reading
   * `.metadata/versions.json` back.
   */
  private readonly writer: AtomicWriter<readonly ObjectVersion[]>;
  /** Targets whose content changed but whose hooks then failed: hooks are owed a retry. */
  private readonly hooksOwed = new Set<string>();
  /** Class and dropped parameter names already warned about: one line per class, not per rotation round. */
  private readonly warnedDropped = new Set<string>();

  constructor(private readonly deps: PublisherDeps) {
    this.writer = deps.writer ?? new AtomicWriter({ logger: deps.logger });
    deps.targets.onForgotten((targetPath) => this.forget(targetPath));
  }

  /** Forgets what it knows of a target (after NodeUnpublishVolume, or a first mount rolled back). */
  forget(targetPath: string): void {
    this.writer.forget(targetPath);
    this.hooksOwed.delete(targetPath);
  }

  /**
   * False when a request names a mount group the volume was not last written for: such a
   * republish rewrites ownership instead of being skipped as fresh. A request naming none
   * leaves ownership as it is, as before volume_mount_group existed.
   */
  private groupUnchanged(req: PublishRequest): boolean {
    return req.mountGroup === undefined || this.writer.wroteFor(req.targetPath, req.mountGroup);
  }

  /** The versions mounted at a target: those it wrote, or `.metadata/versions.json`. */
  private async mountedVersions(targetPath: string): Promise<readonly ObjectVersion[]> {
    return this.writer.tagOf(targetPath) ?? (await readMountedVersions(targetPath));
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
      return await this.deps.locks.withLock(req.targetPath, () => this.publishLocked(req, limits, seen, origin));
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

  private async publishLocked(
    req: PublishRequest,
    limits: CallLimits,
    seen: Seen,
    origin: PublishOrigin,
  ): Promise<PublishedVolume> {
    const spc = await this.deps.classes.get(req.pod.namespace, req.spcName);
    seen.spc = spc;
    // A target that does not exist holds no volume (kubelet leaves creating it to the driver).
    const alreadyMounted = targetDirectoryExists(req.targetPath) && (await this.deps.mounter.isMounted(req.targetPath));
    seen.alreadyMounted = alreadyMounted;
    const decision = alreadyMounted && origin === 'kubelet' ? this.deps.republish?.(req.targetPath, spc) : undefined;
    // A republish naming another group than the files have rewrites ownership, fresh or not.
    if (decision === 'skip' && this.groupUnchanged(req)) {
      // A kubelet republish inside the rotation interval: nothing to fetch (SPEC 6).
      const skipped: PublishedVolume = {
        request: req,
        spc,
        versions: await this.mountedVersions(req.targetPath),
        changed: false,
        firstMount: false,
        origin,
        skipped: true,
      };
      for (const hook of this.deps.skippedHooks ?? []) await hook(skipped, limits);
      return skipped;
    }
    if (decision === 'rotate') {
      origin = 'rotation';
      seen.origin = origin;
    }
    if (!alreadyMounted && origin === 'rotation') {
      // Kubelet unpublished it since the round listed it: rotation never mounts anything,
      // and what this publisher remembered of the target is stale.
      this.forget(req.targetPath);
      return { request: req, spc, versions: [], changed: false, firstMount: false, origin, skipped: true };
    }
    if (!alreadyMounted) {
      await assertNoOverlap(req.targetPath, this.deps.mounter, this.deps.locks.heldPaths());
      await this.deps.mounter.mount(req.targetPath);
    }
    try {
      const hooks = new PublishHooks(this.deps.hooks ?? []);
      const written = await this.fetchAndWrite(req, spc, limits, !alreadyMounted, origin, hooks);
      // Content that changed while the hooks then failed still counts as changed until
      // they succeed, so a Secret or status update is never lost to an unchanged round.
      const published =
        !written.changed && this.hooksOwed.has(req.targetPath) ? { ...written, changed: true } : written;
      try {
        await hooks.run(published, limits);
      } catch (err) {
        if (published.changed) this.hooksOwed.add(req.targetPath);
        // This round's own write (not one owed from an earlier round); a first mount is rolled back below.
        seen.rotated = written.changed && alreadyMounted;
        throw err;
      }
      this.hooksOwed.delete(req.targetPath);
      return published;
    } catch (err) {
      if (!alreadyMounted) await this.rollback(req.targetPath);
      throw err;
    }
  }

  /** Asks the provider and writes its answer; a first mount's hooks start their early parts before the write. */
  private async fetchAndWrite(
    req: PublishRequest,
    spc: SecretProviderClass,
    limits: CallLimits,
    firstMount: boolean,
    origin: PublishOrigin,
    hooks: PublishHooks,
  ): Promise<PublishedVolume> {
    const defaultMode = this.deps.defaultMode ?? DEFAULT_FILE_MODE;
    const mounted = firstMount ? [] : await this.mountedVersions(req.targetPath);
    const dropped = kubeletOwnedParameters(spc.parameters);
    const warning = `${req.pod.namespace}/${req.spcName} ${dropped.join(',')}`;
    if (dropped.length > 0 && !this.warnedDropped.has(warning)) {
      // Kubelet owns these keys: a class must not speak for it (names only, never values).
      this.warnedDropped.add(warning);
      this.deps.logger.warn('ignoring SecretProviderClass parameters that only kubelet may set', {
        spc: `${req.pod.namespace}/${req.spcName}`,
        parameters: dropped.join(','),
      });
    }
    const request = buildMountRequest({
      parameters: spc.parameters,
      volumeContext: req.volumeContext,
      secrets: req.secrets,
      targetPath: req.targetPath,
      defaultMode,
      currentVersions: mounted,
    });
    const response = await this.deps.providers.mount(spc.provider, request, limits);
    const { files: payload, versions } = await validateMountResponse(
      response,
      defaultMode,
      req.targetPath,
      new Pacer(),
    );
    if (!firstMount && keepsMountedFiles(payload.size, versions, mounted)) {
      return { request: req, spc, versions: mounted, changed: false, firstMount, origin, skipped: false };
    }
    for (const [path, file] of metadataFiles(versions)) payload.set(path, file);
    this.deps.mounter.assertWritable(req.targetPath);
    // A first mount writes into an empty volume: it changes, whatever the files are.
    if (firstMount)
      await hooks.start({ request: req, spc, versions, changed: true, firstMount, origin, skipped: false }, limits);
    let changed: boolean;
    try {
      ({ changed } = await this.writer.write(
        req.targetPath,
        payload,
        versionsFile(versions, this.deps.now()),
        this.deps.now(),
        sortVersions(versions),
        req.mountGroup,
      ));
    } catch (err) {
      await hooks.settled();
      throw err;
    }
    return { request: req, spc, versions, changed, firstMount, origin, skipped: false };
  }

  private async rollback(targetPath: string): Promise<void> {
    this.forget(targetPath);
    try {
      await this.deps.mounter.unmount(targetPath);
    } catch (err) {
      this.deps.logger.error('could not clean up after a failed first publish', {
        targetPath,
        error: toSscError(err).message,
      });
    }
  }
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
