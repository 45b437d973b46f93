import { expect } from 'chai';
import type { PodRef, PublishRequest } from '../../../../driver/publish/publish-request.js';
import type { KubeApi } from '../../../../driver/k8s/client/kube-api.js';
import type { EventRecorder } from '../../../../driver/k8s/event-recorder.js';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';
import { PodStatusWriter } from '../../../../driver/pod-status/pod-status.js';
import { kubernetesHooks, type KubernetesHooks } from '../../../../driver/kubernetes-mode/publish-hooks.js';
import type { SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import type { PublishedVolume } from '../../../../driver/publish/publisher.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const pod: PodRef = { name: 'web', namespace: 'default', uid: 'uid-web', serviceAccountName: 'default' };
const spc: SecretProviderClass = {
  namespace: 'default',
  name: 'creds',
  provider: 'file',
  parameters: {},
  secretObjects: [],
  annotations: {},
};

function request(targetPath: string): PublishRequest {
  return { volumeId: 'vol', targetPath, spcName: spc.name, pod, volumeContext: {}, secrets: {} };
}

/** An unchanged rotation round of a mounted volume: it writes to the API only to clear a lastError. */
function unchangedRotation(targetPath: string): PublishedVolume {
  return {
    request: request(targetPath),
    spc,
    versions: [],
    changed: false,
    firstMount: false,
    origin: 'rotation',
    skipped: false,
  };
}

/** Hooks over an API that answers every pod status patch and records the paths written. */
function hooksOverApi(): { hooks: KubernetesHooks; targets: TargetLifecycle; patched: string[] } {
  const patched: string[] = [];
  const api = {
    patch: async (path: string) => {
      patched.push(path);
      return { metadata: { name: 'web-default-creds', namespace: 'default', uid: 'status-uid' }, status: {} };
    },
  } as unknown as KubeApi;
  const logger = createLogger({ component: 'test', silent: true });
  const events: EventRecorder = { event: async () => undefined };
  const targets = new TargetLifecycle();
  const hooks = kubernetesHooks({
    targets,
    api,
    nodeId: 'node-a',
    podStatus: new PodStatusWriter(api, logger),
    secrets: undefined,
    events,
    now: () => new Date(0),
    logger,
  });
  return { hooks, targets, patched };
}

/** A kubelet republish that failed while the old content stays mounted: its lastError is recorded. */
async function failRepublish(hooks: KubernetesHooks, targetPath: string): Promise<void> {
  await hooks.failureHook({
    request: request(targetPath),
    spc,
    error: new SscError('unavailable', 'provider down'),
    stillMounted: true,
    origin: 'kubelet',
  });
}

describe('Kubernetes publish hooks: targets with a recorded lastError', () => {
  const target = '/var/lib/kubelet/pods/uid-web/volumes/kubernetes.io~csi/secrets-store/mount';

  it('the next unchanged rotation round of a target whose republish failed rewrites its pod status (clearing lastError)', async () => {
    const { hooks, patched } = hooksOverApi();
    await failRepublish(hooks, target);
    patched.length = 0;
    await hooks.hook(unchangedRotation(target), {});
    expect(patched).to.have.length(1);
    // Cleared: the round after writes nothing.
    await hooks.hook(unchangedRotation(target), {});
    expect(patched).to.have.length(1);
  });

  it('NodeUnpublishVolume forgets such a target (pod churn must not leave every failed volume in memory)', async () => {
    const { hooks, targets, patched } = hooksOverApi();
    await failRepublish(hooks, target);
    targets.forget(target);
    patched.length = 0;
    // Nothing is remembered of the target any more: an unchanged round has nothing to clear.
    await hooks.hook(unchangedRotation(target), {});
    expect(patched).to.deep.equal([]);
  });
});

describe('Kubernetes publish hook: API requests of a publish with secretObjects', () => {
  it('reads the pod (Secret owners) while the pod status is being created, and waits for both', async () => {
    const events: string[] = [];
    const api = {
      create: async () => {
        events.push('status create sent');
        await new Promise((resolve) => setImmediate(resolve)); // kube-apiserver at work
        events.push('status created');
        return { metadata: { name: 'web-default-creds', namespace: 'default', uid: 'status-uid' }, status: {} };
      },
      get: async (path: string) => {
        events.push(`GET ${path}`);
        return { metadata: { name: 'web', namespace: 'default', uid: 'uid-web', ownerReferences: [] } };
      },
    } as unknown as KubeApi;
    const logger = createLogger({ component: 'test', silent: true });
    const recorded: string[] = [];
    const podEvents: EventRecorder = {
      event: async (_pod, _type, reason) => {
        recorded.push(reason);
      },
    };
    const hooks = kubernetesHooks({
      targets: new TargetLifecycle(),
      api,
      nodeId: 'node-a',
      podStatus: new PodStatusWriter(api, logger),
      secrets: undefined,
      events: podEvents,
      now: () => new Date(0),
      logger,
    });
    const synced = {
      ...spc,
      secretObjects: [
        { secretName: 's', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }], labels: {}, annotations: {} },
      ],
    } as SecretProviderClass;
    await hooks.hook(
      {
        request: request('/var/lib/kubelet/pods/uid-web/volumes/kubernetes.io~csi/v/mount'),
        spc: synced,
        versions: [],
        changed: true,
        firstMount: true,
        origin: 'kubelet',
        skipped: false,
      },
      {},
    );
    expect(events).to.deep.equal(['status create sent', 'GET /api/v1/namespaces/default/pods/web', 'status created']);
    // Secret sync is off here: the first mount says so on the pod, after both requests.
    expect(recorded).to.deep.equal(['SecretSyncDisabled']);
  });
});
