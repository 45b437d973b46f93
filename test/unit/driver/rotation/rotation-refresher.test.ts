import { expect } from 'chai';
import type { PodRef } from '../../../../driver/publish/publish-request.js';
import type { EventReason } from '../../../../driver/k8s/event-recorder.js';
import { PublishingRefresher } from '../../../../driver/rotation/refresher.js';
import { PublishError, type VolumePublisher } from '../../../../driver/publish/publisher.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const pod: PodRef = { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: 'default' };
const volume = { targetPath: '/t', pod, spcName: 's', provider: 'file', intervalMs: 1000 };
const request = { volumeId: 'v', targetPath: '/t', spcName: 's', pod, volumeContext: {}, secrets: {} };

function refresher(publish: () => Promise<unknown>, rebuild: () => Promise<unknown> = async () => request) {
  const events: string[] = [];
  const r = new PublishingRefresher(
    { publish } as unknown as VolumePublisher,
    { rebuild } as never,
    {
      event: async (_p: PodRef, type: string, reason: EventReason, message: string) => {
        events.push(`${type} ${reason}: ${message}`);
      },
    },
    createLogger({ component: 'test', silent: true }),
    1000,
  );
  return { r, events };
}

describe('PublishingRefresher', () => {
  it('skips a volume whose target is held by a kubelet publish or unpublish, without events', async () => {
    const { r, events } = refresher(async () => {
      throw new SscError('aborted', 'busy', { reason: 'OperationInProgress' });
    });
    expect(await r.refresh(volume, new AbortController().signal)).to.deep.equal({
      result: 'skipped',
      provider: 'file',
    });
    expect(events).to.deep.equal([]);
  });

  it('reports a changed volume with MountRotationComplete and an unchanged one silently', async () => {
    const changed = refresher(async () => ({
      changed: true,
      versions: [{ id: 'a', version: '2' }],
      spc: { provider: 'file' },
    }));
    expect((await changed.r.refresh(volume, new AbortController().signal)).result).to.equal('changed');
    expect(changed.events).to.deep.equal([
      'Normal MountRotationComplete: rotated mounted content for SecretProviderClass s (objects: a)',
    ]);
    const same = refresher(async () => ({ changed: false, versions: [], spc: { provider: 'file' } }));
    expect((await same.r.refresh(volume, new AbortController().signal)).result).to.equal('unchanged');
    expect(same.events).to.deep.equal([]);
  });

  it('turns a failed publish into MountRotationFailed with the error reason', async () => {
    const { r, events } = refresher(async () => {
      throw new SscError('deadline-exceeded', 'provider "file" Mount did not answer in time', {
        reason: 'ProviderTimeout',
      });
    });
    expect(await r.refresh(volume, new AbortController().signal)).to.deep.equal({
      result: 'failed',
      provider: 'file',
      errorType: 'ProviderTimeout',
      rotated: false,
    });
    expect(events).to.deep.equal(['Warning MountRotationFailed: provider "file" Mount did not answer in time']);
  });

  it('reports rotated when new content was written before the publish failed', async () => {
    const { r } = refresher(async () => {
      throw new PublishError(
        new SscError('unavailable', 'API down', { reason: 'KubernetesAPIUnavailable' }),
        'vault',
        true,
      );
    });
    expect(await r.refresh(volume, new AbortController().signal)).to.deep.equal({
      result: 'failed',
      provider: 'vault',
      errorType: 'KubernetesAPIUnavailable',
      rotated: true,
    });
  });

  it('escapes and bounds the object ids (provider text) in MountRotationComplete', async () => {
    const changed = refresher(async () => ({
      changed: true,
      versions: [
        { id: 'a\n\u001b[2J', version: '2' },
        { id: 'b'.repeat(600), version: '1' },
      ],
      spc: { provider: 'file' },
    }));
    await changed.r.refresh(volume, new AbortController().signal);
    expect(changed.events).to.deep.equal([
      `Normal MountRotationComplete: rotated mounted content for SecretProviderClass s (objects: a\\n\\u001b[2J, ${'b'.repeat(492)}…)`,
    ]);
  });

  it('skips a volume whose pod is gone, and reports a request that cannot be rebuilt', async () => {
    expect(
      (
        await refresher(
          async () => ({}),
          async () => undefined,
        ).r.refresh(volume, new AbortController().signal)
      ).result,
    ).to.equal('skipped');
    const { r, events } = refresher(
      async () => ({}),
      async () => {
        throw new SscError('permission-denied', 'Kubernetes API refused to get Pod n/p: HTTP 403', {
          reason: 'KubernetesAPIError',
        });
      },
    );
    expect((await r.refresh(volume, new AbortController().signal)).result).to.equal('failed');
    expect(events[0]).to.match(
      /^Warning MountRotationFailed: rotation for pod n\/p, SecretProviderClass n\/s could not prepare the request: Kubernetes API refused/,
    );
  });
});
