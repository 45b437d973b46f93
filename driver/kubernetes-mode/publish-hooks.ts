import { secretOwners } from '../secret-sync/secret-owners.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import { splitHook } from '../publish/hook-stages.js';
import type { PublishedVolume, PublishFailure, PublishFailureHook, PublishHook } from '../publish/publisher.js';
import { fromKubeError } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { ObjectMeta, OwnerReference, Pod } from '../k8s/client/types.js';
import { RESTART_ON_ROTATION_ANNOTATION } from '../k8s/constants.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import { corePath } from '../k8s/resource-paths.js';
import {
  deletePodStatus,
  readPodStatus,
  recordPodStatusError,
  type PodStatusObject,
  type PodStatusWriter,
} from '../pod-status/pod-status.js';
import type { VolumeSecretSync } from '../secret-sync/volume-secret-sync.js';
import type { WatchedCache } from '../k8s/watched-cache.js';
import type { WorkloadRestarter } from '../rotation/workload-restart.js';

/** What the Kubernetes publish hook needs. */
export interface KubernetesHookDeps {
  readonly api: KubeApi;
  readonly nodeId: string;
  readonly podStatus: PodStatusWriter;
  /** Undefined with --enable-secret-sync=false. */
  readonly secrets: VolumeSecretSync | undefined;
  /** Restarts workloads of classes that opt in (undefined without rotation). */
  readonly restarter?: WorkloadRestarter | undefined;
  /** Targets whose pod status carries a lastError: their next success rewrites the status. */
  readonly errored?: Set<string>;
  readonly events: EventRecorder;
  /** This node's pods, when watched (rotation on): owner references without a GET per publish. */
  readonly pods?: WatchedCache<Pod> | undefined;
  readonly now: () => Date;
  readonly logger: Logger;
}

async function readPodMeta(api: KubeApi, pod: PodRef, pods: WatchedCache<Pod> | undefined): Promise<ObjectMeta> {
  const cached = pods?.get(pod.name, pod.namespace)?.metadata;
  if (cached && cached.uid === pod.uid) return cached;
  try {
    return (await api.get<Pod>(corePath('pods', pod.namespace, pod.name))).metadata ?? {};
  } catch (err) {
    throw fromKubeError(err, `get Pod ${pod.namespace}/${pod.name}`);
  }
}

/**
 * What the API part of the hook left for the rest: nothing to do, or the stored status (if
 * read or written), and the pod's metadata with the restarter when Secrets or a restart need them.
 */
type StatusStep =
  | { readonly done: true }
  | {
      readonly done: false;
      readonly status: PodStatusObject | undefined;
      readonly pod: ObjectMeta | undefined;
      readonly restarter: WorkloadRestarter | undefined;
    };

/** Both results, or the first one's error, then the second's; never before both have finished. */
async function both<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/**
 * The last step of a publish in Kubernetes mode, as a publish hook: record the SecretProviderClassPodStatus, then sync
 * the class's secretObjects into Kubernetes Secrets, adding this pod's owner to each. A
 * sync failure never fails the publish: VolumeSecretSync reports it
 * and retries in the background. The status needs only the versions: for a first mount
 * its create starts before the files are written (splitHook); it exists before the
 * publish returns, as upstream's does, and the Secrets, read from the files, come after.
 * The pod's owners, when needed, are read alongside the status: two independent requests.
 */
export function kubernetesPublishHook(deps: KubernetesHookDeps): PublishHook {
  const recordStatus = async (volume: PublishedVolume, unchanged: boolean): Promise<PodStatusObject | undefined> => {
    const { request, spc } = volume;
    // An unchanged kubelet republish leaves the status as it is (it only re-checks Secrets).
    if (unchanged && spc.secretObjects.length === 0) return undefined;
    const record = {
      pod: request.pod,
      spcName: spc.name,
      nodeId: deps.nodeId,
      targetPath: request.targetPath,
      objects: volume.versions,
      mountTime: deps.now(),
    };
    const status =
      (unchanged ? await readPodStatus(deps.api, request.pod, spc.name) : undefined) ??
      (await deps.podStatus.record(record, { likelyExists: !volume.firstMount }));
    if (!unchanged) deps.errored?.delete(request.targetPath);
    return status;
  };
  return splitHook<StatusStep>({
    async beforeWrite(volume: PublishedVolume): Promise<StatusStep> {
      const { request, spc } = volume;
      // An unchanged rotation round writes nothing to the API (no writes when nothing changed).
      // (Unless an earlier failure left a lastError that this success must clear.)
      if (volume.origin === 'rotation' && !volume.changed && !deps.errored?.has(request.targetPath))
        return { done: true };
      const unchanged = !volume.changed && !volume.firstMount && !deps.errored?.has(request.targetPath);
      const restarter =
        volume.origin === 'rotation' && volume.changed && spc.annotations[RESTART_ON_ROTATION_ANNOTATION] === 'true'
          ? deps.restarter
          : undefined;
      const needsPod = spc.secretObjects.length > 0 || restarter !== undefined;
      const [status, pod] = await both(
        recordStatus(volume, unchanged),
        needsPod ? readPodMeta(deps.api, request.pod, deps.pods) : Promise.resolve(undefined),
      );
      return { done: false, status, pod, restarter };
    },
    async afterWrite(volume: PublishedVolume, _limits, step: StatusStep): Promise<void> {
      if (step.done || step.pod === undefined) return;
      const { request, spc } = volume;
      const { pod, restarter } = step;
      // Secrets first: the restarted pods must find them already updated.
      if (step.status)
        await syncSecrets(
          deps,
          volume,
          secretOwners(pod.ownerReferences, step.status),
          step.status.status?.secretSyncError ?? '',
        );
      if (restarter)
        await restarter.restart(
          request.pod,
          pod.ownerReferences,
          spc.name,
          pod.creationTimestamp ? new Date(pod.creationTimestamp) : undefined,
        );
    },
  });
}

/** Syncs the class's secretObjects; never throws. */
async function syncSecrets(
  deps: KubernetesHookDeps,
  volume: PublishedVolume,
  owners: OwnerReference[],
  recordedError: string,
): Promise<void> {
  const { request, spc } = volume;
  if (spc.secretObjects.length === 0) return;
  if (!deps.secrets) {
    if (volume.firstMount) {
      await deps.events.event(
        request.pod,
        'Warning',
        'SecretSyncDisabled',
        `SecretProviderClass ${spc.namespace}/${spc.name} lists secretObjects but the driver runs with --enable-secret-sync=false; no Secret was created`,
      );
    }
    return;
  }
  const trigger =
    volume.origin === 'rotation' ? 'rotation' : volume.firstMount || volume.changed ? 'publish' : 'republish';
  await deps.secrets.sync({ pod: request.pod, targetPath: request.targetPath, spc, owners, recordedError }, trigger);
}

/** Kubernetes mode's publish hooks, sharing what they remember per target path. */
export interface KubernetesHooks {
  readonly hook: PublishHook;
  readonly failureHook: PublishFailureHook;
}

/**
 * The publish and failure hooks with their shared memory of targets whose pod status
 * carries a lastError (the next success rewrites it). A volume `targets` forgets while it
 * carries one is forgotten here too, else every such volume would stay in memory for good.
 */
export function kubernetesHooks(
  deps: Omit<KubernetesHookDeps, 'errored'> & { readonly targets: TargetLifecycle },
): KubernetesHooks {
  const errored = new Set<string>();
  deps.targets.onForgotten((targetPath) => {
    errored.delete(targetPath);
  });
  return {
    hook: kubernetesPublishHook({ ...deps, errored }),
    failureHook: kubernetesFailureHook({ ...deps, errored }),
  };
}

/**
 * After a failed publish: a Warning MountFailed event on the Pod (kubelet's own
 * FailedMount event carries the same message, but ours also reaches pods whose
 * rotation fails), and for a failed republish the pod status object's lastError.
 * Never throws: reporting must not change the outcome.
 */
export function kubernetesFailureHook(
  deps: Pick<KubernetesHookDeps, 'api' | 'events' | 'logger' | 'errored'>,
): PublishFailureHook {
  return async (failure: PublishFailure) => {
    const { request, spc, error, stillMounted } = failure;
    // A refresh cancelled by a driver shutdown is not a failure of the volume.
    if (failure.origin === 'rotation' && error.reason === 'Cancelled') return;
    // Rotation reports its own failures (MountRotationFailed).
    if (failure.origin === 'kubelet') await deps.events.event(request.pod, 'Warning', 'MountFailed', error.message);
    if (!spc) return;
    if (!stillMounted) {
      // A failed first publish may have written the status before a later step failed.
      await deletePodStatus(deps.api, request.pod, spc.name).catch((err: unknown) => {
        deps.logger.warn('could not delete the pod status object of a failed first publish', {
          pod: `${request.pod.namespace}/${request.pod.name}`,
          error: (err as Error).message,
        });
      });
      return;
    }
    await recordPodStatusError(deps.api, request.pod, spc.name, error.message).then(
      () => {
        deps.errored?.add(request.targetPath);
      },
      (err: unknown) => {
        deps.logger.warn('could not record lastError on the pod status object', {
          pod: `${request.pod.namespace}/${request.pod.name}`,
          error: (err as Error).message,
        });
      },
    );
  };
}
