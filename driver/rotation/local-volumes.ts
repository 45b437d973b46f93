import { realpath } from 'node:fs/promises';
import type { Logger } from '../../lib/logging/logger.js';
import type { PublishRequest } from '../publish/publish-request.js';
import type { Mounter } from '../mount/mounter.js';
import type { PublishedVolume } from '../publish/publisher.js';
import { KeyedQueue } from '../../lib/concurrency.js';
import type { RotationVolume, VolumeSource } from './reconciler.js';
import { readVolumeRecord, writeVolumeRecord, type RecordIndex } from './record-store.js';
import type { RequestRebuilder } from './refresher.js';
import { requestOfRecord, serializeVolumeRecord, volumeRecordOf, type VolumeRecord } from './volume-record.js';

/** What local mode knows of one volume. */
interface LocalVolume {
  readonly request: PublishRequest;
  readonly provider: string;
  /** False for a volume adopted after a restart whose publish carried secrets or tokens. */
  readonly rotatable: boolean;
}

/** Where local mode finds and keeps its volume records. */
export interface LocalVolumesOptions {
  readonly mounter: Mounter;
  readonly intervalMs: number;
  /** This driver's record owner (recordOwner): records of other drivers are left alone. */
  readonly owner: string;
  readonly logger: Logger;
  /** `--mount-mode=dir`: the index of recorded targets (there is no mountinfo to scan). */
  readonly index?: RecordIndex;
  /** Tmpfs mode: the tmpfs mount points, where records are looked for at start. */
  readonly mountPoints?: () => Promise<string[]>;
}

/**
 * Local mode's volumes: what the client (kubelet or the CLI) last sent for each target,
 * kept in memory, plus a record of it in the target (never a secret) so a restarted
 * driver finds its volumes again: in the driver's tmpfs mounts, or through the index in
 * dir mode. Kubernetes mode lists pod status objects instead.
 */
export class LocalVolumes implements VolumeSource, RequestRebuilder {
  private readonly volumes = new Map<string, LocalVolume>();
  /** The record text last written to (or read from) each target, so an unchanged one is not rewritten. */
  private readonly written = new Map<string, string>();
  /** Record and index writes, removals and pruning of one target run in order. */
  private readonly queue = new KeyedQueue();
  private recovered: Promise<void> | undefined;

  constructor(private readonly options: LocalVolumesOptions) {}

  /** Remembers the request of every successful client publish and records it in the target. */
  async notePublished(volume: PublishedVolume): Promise<void> {
    const { request, spc } = volume;
    const target = request.targetPath;
    this.volumes.set(target, { request, provider: spc.provider, rotatable: true });
    const text = serializeVolumeRecord(volumeRecordOf(request, spc.provider, this.options.owner));
    // A first mount is a fresh, empty volume: whatever was recorded before went with the old one.
    if (!volume.firstMount && this.written.get(target) === text) return;
    await this.queue.run(target, async () => {
      try {
        // A target someone unmounted behind our back is a directory on the node's disk: no record there.
        this.options.mounter.assertWritable(target);
        await this.options.index?.add(target);
        await writeVolumeRecord(target, text);
        this.written.set(target, text);
      } catch (err) {
        this.options.logger.warn('could not record the volume: a restarted driver will not rotate it', {
          targetPath: target,
          error: (err as Error).message,
        });
      }
    });
  }

  /**
   * Forgets a target (after NodeUnpublishVolume, which removed its record with the volume);
   * resolves once its index entry is gone. Queued, so a publish right after it re-adds the entry.
   */
  forget(targetPath: string): Promise<void> {
    this.volumes.delete(targetPath);
    this.written.delete(targetPath);
    const { index } = this.options;
    return index ? this.queue.run(targetPath, () => index.remove(targetPath)) : Promise.resolve();
  }

  async list(): Promise<RotationVolume[]> {
    await (this.recovered ??= this.recover());
    const out: RotationVolume[] = [];
    for (const [targetPath, { request, provider, rotatable }] of this.volumes) {
      if (!(await this.options.mounter.isMounted(targetPath))) {
        this.volumes.delete(targetPath);
        this.written.delete(targetPath);
        continue;
      }
      if (rotatable)
        out.push({
          targetPath,
          pod: request.pod,
          spcName: request.spcName,
          provider,
          intervalMs: this.options.intervalMs,
        });
    }
    return out;
  }

  async rebuild(volume: RotationVolume): Promise<PublishRequest | undefined> {
    return this.volumes.get(volume.targetPath)?.request;
  }

  /** Finds the volumes a previous run of this driver published (once, before the first round). */
  private async recover(): Promise<void> {
    const { index, mountPoints, logger } = this.options;
    try {
      const candidates = index ? await index.list() : ((await mountPoints?.()) ?? []);
      for (const candidate of candidates) await this.queue.run(candidate, () => this.adopt(candidate));
    } catch (err) {
      logger.warn('could not look for volumes published before a restart', { error: (err as Error).message });
    }
  }

  /** Adopts the volume recorded at `candidate` if it is this driver's and still mounted; dir mode prunes the rest. */
  private async adopt(candidate: string): Promise<void> {
    const { index, logger } = this.options;
    let record: VolumeRecord | undefined;
    try {
      record = await readVolumeRecord(candidate);
      if (record !== undefined && record.owner !== this.options.owner) {
        logger.debug('leaving alone the volume record of another driver', { path: candidate, owner: record.owner });
        record = undefined;
      } else if (record !== undefined && !(await this.describes(record, candidate))) {
        throw new Error(`it describes ${record.targetPath}`);
      }
    } catch (err) {
      logger.warn('ignoring a volume record', { path: candidate, reason: (err as Error).message });
      record = undefined;
    }
    const mounted = record !== undefined && (await this.options.mounter.isMounted(record.targetPath));
    if (!record || !mounted) {
      if (index) await index.remove(candidate);
      return;
    }
    // A publish since this driver started knows better than the record.
    if (this.volumes.has(record.targetPath)) return;
    this.volumes.set(record.targetPath, {
      request: requestOfRecord(record),
      provider: record.provider,
      rotatable: !record.withheld,
    });
    this.written.set(record.targetPath, serializeVolumeRecord(record));
    const fields = {
      targetPath: record.targetPath,
      pod: `${record.pod.namespace}/${record.pod.name}`,
      spc: record.spcName,
    };
    if (record.withheld)
      logger.warn(
        'found a volume published before the restart with secrets or tokens, which are never recorded: rotation resumes after its next publish',
        fields,
      );
    else logger.info('resuming rotation of a volume published before the restart', fields);
  }

  /** True when the record was found where its target is (a copied record does not count). */
  private async describes(record: VolumeRecord, candidate: string): Promise<boolean> {
    if (this.options.index) return record.targetPath === candidate;
    return (await realpath(record.targetPath).catch(() => undefined)) === candidate;
  }
}
