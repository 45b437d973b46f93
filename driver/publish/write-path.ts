import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { toSscError } from '../../lib/errors.js';
import { Pacer } from '../../lib/pacer.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { CallLimits } from '../provider-client/client.js';
import type { Mounter } from '../mount/mounter.js';
import { assertNoOverlap } from '../mount/nesting.js';
import type { TargetLocks } from '../mount/target-locks.js';
import type { SecretProviderClass } from '../spc/secret-provider-class.js';
import { AtomicWriter } from '../volume/atomic-writer.js';
import { metadataFiles, readMountedVersions, sortVersions, versionsFile } from '../volume/metadata.js';
import type { ObjectVersion } from '../volume/payload.js';
import { PublishHooks, type PublishHook } from './hook-stages.js';
import { buildMountRequest, kubeletOwnedParameters } from './mount-request.js';
import { keepsMountedFiles, validateMountResponse, type ValidMount } from './mount-response.js';
import type { PublishedVolume } from './publish-outcome.js';
import type { PublishPlan } from './publish-plan.js';
import type { PublishRequest } from './publish-request.js';

/** The provider side of publishing: one Mount call. */
export interface ProviderPort {
  mount(provider: string, request: MountRequest, limits: CallLimits): Promise<MountResponse__Output>;
}

/** What the write path needs; each is a small port so tests can use real or fake parts. */
export interface WritePathDeps {
  readonly locks: TargetLocks;
  readonly mounter: Mounter;
  readonly providers: ProviderPort;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Default file mode sent as `permission` and used for mode-0 files (0644). */
  readonly defaultMode?: number;
  readonly hooks?: readonly PublishHook[];
  /** The atomic writer (shared so it remembers digests of what it wrote). */
  readonly writer?: AtomicWriter<readonly ObjectVersion[]>;
}

/** A publish decided to write: why it runs, and whether it mounts the volume first. */
export type PlannedWrite = Extract<PublishPlan, { readonly action: 'write' }>;

/** What the write path tells the publisher as it goes, for the error of a failed publish. */
export interface WriteProgress {
  /** New content is in the volume, but a hook (pod status, Secret sync) then failed. */
  rotated: boolean;
}

const DEFAULT_FILE_MODE = 0o644;

/**
 * A publish's write path, once the publisher has decided to write: mount a first one,
 * ask the provider, validate, write atomically with `.metadata`, run the hooks. A failed
 * first mount leaves nothing behind; a failed republish keeps serving the old content.
 */
export class WritePath {
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

  constructor(private readonly deps: WritePathDeps) {
    this.writer = deps.writer ?? new AtomicWriter({ logger: deps.logger });
  }

  /** Forgets what it knows of a target: what it wrote there, and hooks owed. */
  forget(targetPath: string): void {
    this.writer.forget(targetPath);
    this.hooksOwed.delete(targetPath);
  }

  /**
   * False when a request names a mount group the volume was not last written for: such a
   * republish rewrites ownership instead of being skipped as fresh. A request naming none
   * leaves ownership as it is, as before volume_mount_group existed.
   */
  groupUnchanged(req: PublishRequest): boolean {
    return req.mountGroup === undefined || this.writer.wroteFor(req.targetPath, req.mountGroup);
  }

  /** The versions mounted at a target: those it wrote, or `.metadata/versions.json`. */
  async mountedVersions(targetPath: string): Promise<readonly ObjectVersion[]> {
    return this.writer.tagOf(targetPath) ?? (await readMountedVersions(targetPath));
  }

  /** Carries out `plan` for `req` (under the target's lock); a first mount that fails is rolled back. */
  async write(
    req: PublishRequest,
    spc: SecretProviderClass,
    plan: PlannedWrite,
    limits: CallLimits,
    progress: WriteProgress,
  ): Promise<PublishedVolume> {
    if (plan.firstMount) {
      await assertNoOverlap(req.targetPath, this.deps.mounter, this.deps.locks.heldPaths());
      await this.deps.mounter.mount(req.targetPath);
    }
    try {
      return await this.writeAndRunHooks(req, spc, plan, limits, progress);
    } catch (err) {
      if (plan.firstMount) await this.rollback(req.targetPath);
      throw err;
    }
  }

  private async writeAndRunHooks(
    req: PublishRequest,
    spc: SecretProviderClass,
    plan: PlannedWrite,
    limits: CallLimits,
    progress: WriteProgress,
  ): Promise<PublishedVolume> {
    const hooks = new PublishHooks(this.deps.hooks ?? []);
    const written = await this.fetchAndWrite(req, spc, plan, limits, hooks);
    // Content that changed while the hooks then failed still counts as changed until
    // they succeed, so a Secret or status update is never lost to an unchanged round.
    const published = !written.changed && this.hooksOwed.has(req.targetPath) ? { ...written, changed: true } : written;
    try {
      await hooks.run(published, limits);
    } catch (err) {
      if (published.changed) this.hooksOwed.add(req.targetPath);
      // This round's own write (not one owed from an earlier round); a first mount is rolled back.
      progress.rotated = written.changed && !plan.firstMount;
      throw err;
    }
    this.hooksOwed.delete(req.targetPath);
    return published;
  }

  /** Asks the provider and writes its answer; a first mount's hooks start their early parts before the write. */
  private async fetchAndWrite(
    req: PublishRequest,
    spc: SecretProviderClass,
    { origin, firstMount }: PlannedWrite,
    limits: CallLimits,
    hooks: PublishHooks,
  ): Promise<PublishedVolume> {
    const mounted = firstMount ? [] : await this.mountedVersions(req.targetPath);
    const { files: payload, versions } = await this.ask(req, spc, mounted, limits);
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

  /** One Mount call with the versions mounted now; the answer validated into files and versions. */
  private async ask(
    req: PublishRequest,
    spc: SecretProviderClass,
    mounted: readonly ObjectVersion[],
    limits: CallLimits,
  ): Promise<ValidMount> {
    const defaultMode = this.deps.defaultMode ?? DEFAULT_FILE_MODE;
    this.warnDropped(req, spc);
    const request = buildMountRequest({
      parameters: spc.parameters,
      volumeContext: req.volumeContext,
      secrets: req.secrets,
      targetPath: req.targetPath,
      defaultMode,
      currentVersions: mounted,
    });
    const response = await this.deps.providers.mount(spc.provider, request, limits);
    return validateMountResponse(response, defaultMode, req.targetPath, new Pacer());
  }

  /** Kubelet owns some parameter keys: a class must not speak for it (names only, never values). */
  private warnDropped(req: PublishRequest, spc: SecretProviderClass): void {
    const dropped = kubeletOwnedParameters(spc.parameters);
    const warning = `${req.pod.namespace}/${req.spcName} ${dropped.join(',')}`;
    if (dropped.length === 0 || this.warnedDropped.has(warning)) return;
    this.warnedDropped.add(warning);
    this.deps.logger.warn('ignoring SecretProviderClass parameters that only kubelet may set', {
      spc: `${req.pod.namespace}/${req.spcName}`,
      parameters: dropped.join(','),
    });
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
