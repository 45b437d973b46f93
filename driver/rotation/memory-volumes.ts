import type { PublishRequest } from '../csi/requests.js';
import type { Mounter } from '../volume/mounter.js';
import type { PublishedVolume } from '../volume/publisher.js';
import type { RequestRebuilder } from './refresher.js';
import type { RotationVolume, VolumeSource } from './reconciler.js';

/**
 * Local mode's record of published volumes: what kubelet (or the CLI) last sent for
 * each target, kept in memory. Kubernetes mode lists pod status objects instead, so it
 * survives restarts; local mode forgets its volumes when the driver restarts.
 */
export class MemoryVolumes implements VolumeSource, RequestRebuilder {
  private readonly volumes = new Map<string, { request: PublishRequest; provider: string }>();

  constructor(private readonly mounter: Mounter, private readonly intervalMs: number) {}

  /** Remembers the request of every successful kubelet publish (a skipped one carries fresh tokens too). */
  notePublished(volume: PublishedVolume): void {
    this.volumes.set(volume.request.targetPath, { request: volume.request, provider: volume.spc.provider });
  }

  /** Forget a target (after NodeUnpublishVolume). */
  forget(targetPath: string): void {
    this.volumes.delete(targetPath);
  }

  async list(): Promise<RotationVolume[]> {
    const out: RotationVolume[] = [];
    for (const [targetPath, { request, provider }] of this.volumes) {
      if (!await this.mounter.isMounted(targetPath)) { this.volumes.delete(targetPath); continue; }
      out.push({ targetPath, pod: request.pod, spcName: request.spcName, provider, intervalMs: this.intervalMs });
    }
    return out;
  }

  async rebuild(volume: RotationVolume): Promise<PublishRequest | undefined> {
    return this.volumes.get(volume.targetPath)?.request;
  }
}
