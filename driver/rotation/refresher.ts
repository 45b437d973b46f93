import { toSscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import { printable } from '../../lib/untrusted-text.js';
import type { PublishRequest } from '../publish/publish-request.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { VolumePublisher } from '../publish/publisher.js';
import type { RefreshReport, RotationVolume, VolumeRefresher } from './reconciler.js';

/** The MountRotationComplete message: the class and the object ids (provider text: bounded and escaped like its messages). */
export function rotationCompleteMessage(spcName: string, versions: readonly { readonly id: string }[]): string {
  return `rotated mounted content for SecretProviderClass ${spcName} (objects: ${printable(versions.map((v) => v.id).join(', '), 500)})`;
}

/** Rebuilds what kubelet sent for a mounted volume (volume context, fresh tokens, secrets). */
export interface RequestRebuilder {
  /** The publish request for `volume`, or undefined when its pod is gone (skip it). */
  rebuild(volume: RotationVolume): Promise<PublishRequest | undefined>;
}

/**
 * Refreshes a volume through the same VolumePublisher (and per-target lock) as
 * NodePublishVolume, then tells the user: Normal MountRotationComplete when content
 * changed, Warning MountRotationFailed when it failed; nothing when nothing changed.
 * A failed refresh keeps the old content (the publisher guarantees it).
 */
export class PublishingRefresher implements VolumeRefresher {
  constructor(
    private readonly publisher: VolumePublisher,
    private readonly requests: RequestRebuilder,
    private readonly events: EventRecorder | undefined,
    private readonly logger: Logger,
    private readonly callTimeoutMs: number,
  ) {}

  async refresh(volume: RotationVolume, signal: AbortSignal): Promise<RefreshReport> {
    const where = `pod ${volume.pod.namespace}/${volume.pod.name}, SecretProviderClass ${volume.pod.namespace}/${volume.spcName}`;
    let request: PublishRequest | undefined;
    try {
      request = await this.requests.rebuild(volume);
    } catch (err) {
      const e = toSscError(err);
      await this.reportFailure(volume, e.reason, `rotation for ${where} could not prepare the request: ${e.message}`);
      return { result: 'failed', provider: volume.provider, errorType: e.reason, rotated: false };
    }
    if (!request) return { result: 'skipped', provider: volume.provider };
    try {
      const published = await this.publisher.publish(
        request,
        { signal, deadline: new Date(Date.now() + this.callTimeoutMs) },
        'rotation',
      );
      if (published.skipped) return { result: 'skipped', provider: published.spc.provider };
      if (published.changed) {
        await this.events?.event(
          volume.pod,
          'Normal',
          'MountRotationComplete',
          rotationCompleteMessage(volume.spcName, published.versions),
        );
        this.logger.info('volume rotated', {
          pod: `${volume.pod.namespace}/${volume.pod.name}`,
          spc: volume.spcName,
          targetPath: volume.targetPath,
        });
        return { result: 'changed', provider: published.spc.provider };
      }
      return { result: 'unchanged', provider: published.spc.provider };
    } catch (err) {
      const e = toSscError(err);
      // Another operation holds the target (a kubelet publish or unpublish): try next round.
      // A driver shutting down cancels refreshes in flight: not a failure to report.
      if (e.reason === 'OperationInProgress' || signal.aborted) return { result: 'skipped', provider: volume.provider };
      await this.reportFailure(volume, e.reason, e.message);
      const { provider, rotated } = err as { provider?: string; rotated?: boolean };
      return {
        result: 'failed',
        provider: provider || volume.provider,
        errorType: e.reason,
        rotated: rotated === true,
        ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs }),
      };
    }
  }

  /** Logs a failed refresh and tells the pod (MountRotationFailed). */
  private async reportFailure(volume: RotationVolume, reason: string, message: string): Promise<void> {
    this.logger.warn('rotation refresh failed', {
      pod: `${volume.pod.namespace}/${volume.pod.name}`,
      spc: volume.spcName,
      targetPath: volume.targetPath,
      reason,
      error: message,
    });
    await this.events?.event(volume.pod, 'Warning', 'MountRotationFailed', message);
  }
}
