import type { PodStatusItem } from '../pod-status/pod-status-item.js';
import type { Logger } from '../../lib/logging/logger.js';
import {
  EPHEMERAL_KEY,
  POD_NAME_KEY,
  POD_NAMESPACE_KEY,
  POD_UID_KEY,
  SECRET_PROVIDER_CLASS_KEY,
  SERVICE_ACCOUNT_NAME_KEY,
  type PublishRequest,
} from '../publish/publish-request.js';
import { SERVICE_ACCOUNT_TOKENS_KEY } from '../publish/mount-request.js';
import type { RotationVolume, VolumeSource } from '../rotation/reconciler.js';
import type { RequestRebuilder } from '../rotation/refresher.js';
import { annotatedInterval } from '../rotation/schedule.js';
import type { Mounter } from '../mount/mounter.js';
import { MAX_MOUNT_GROUP } from '../volume/ownership.js';
import type { PublishedVolume } from '../publish/publisher.js';
import { cleanTargetPath } from '../mount/target-path.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { CsiVolumeSource, KubeList, Pod, Secret } from '../k8s/client/types.js';
import { NODE_NAME_LABEL, REFRESH_REQUESTED_ANNOTATION, ROTATION_INTERVAL_ANNOTATION } from '../k8s/constants.js';
import { corePath, podStatusPath } from '../k8s/resource-paths.js';
import type { ServiceAccountTokens } from '../k8s/service-account-tokens.js';
import type { ApiSecretProviderClassSource } from './spc-api-source.js';
import type { NamespacedWatches } from '../k8s/namespaced-watches.js';
import type { WatchedCache } from '../k8s/watched-cache.js';

/** The pod volume name kubelet puts in a CSI target path (…/volumes/kubernetes.io~csi/<name>/mount). */
export function volumeNameOf(targetPath: string): string | undefined {
  return /\/volumes\/kubernetes\.io~csi\/([^/]+)\/mount\/?$/.exec(targetPath)?.[1];
}

/** The pod's CSI volume for `targetPath`: by name from the path, else the one naming `spcName`. */
export function csiVolumeOf(
  pod: Pod,
  targetPath: string,
  driverName: string,
  spcName: string,
): CsiVolumeSource | undefined {
  const volumes = pod.spec?.volumes ?? [];
  const byName = volumeNameOf(targetPath);
  const named = volumes.find((v) => v.name === byName)?.csi;
  if (named) return named;
  return volumes
    .map((v) => v.csi)
    .find((c) => c?.driver === driverName && c.volumeAttributes?.[SECRET_PROVIDER_CLASS_KEY] === spcName);
}

/**
 * The mount group kubelet sends for `pod` (it passes pod.spec.securityContext.fsGroup as
 * volume_mount_group to a driver advertising VOLUME_MOUNT_GROUP, whatever the CSIDriver's
 * fsGroupPolicy or the pod's fsGroupChangePolicy), so a refresh writes for the same group.
 */
export function mountGroupOf(pod: Pod): number | undefined {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  return Number.isInteger(fsGroup) && (fsGroup as number) >= 0 && (fsGroup as number) <= MAX_MOUNT_GROUP
    ? fsGroup
    : undefined;
}

/**
 * Rotation's view of this node in Kubernetes mode: the volumes are the pod status
 * objects labelled with this node whose target path is still mounted, so a restarted
 * driver resumes where it was; requests are rebuilt from the Pod as kubelet would send
 * them (volume attributes, fresh service-account tokens, nodePublishSecretRef data).
 */
export class ApiVolumes implements VolumeSource, RequestRebuilder {
  private readonly warnedUnlabelled = new Set<string>();
  /** Last refresh-requested-at value acted on, per target path. */
  private readonly refreshHandled = new Map<string, string>();

  constructor(
    private readonly api: KubeApi,
    private readonly classes: ApiSecretProviderClassSource,
    private readonly tokens: ServiceAccountTokens,
    private readonly mounter: Mounter,
    private readonly options: { nodeId: string; driverName: string; defaultIntervalMs: number },
    private readonly logger: Logger,
    /** This node's pods (list+watch on spec.nodeName); a miss falls back to a GET. */
    private readonly pods?: WatchedCache<Pod>,
    /** Secrets labelled used=true (nodePublishSecretRef and synced ones), watched per namespace; a miss falls back to a GET. */
    private readonly usedSecrets?: NamespacedWatches<Secret>,
    /** This node's pod status objects (list+watch on the node label); a LIST per round until it has synced. */
    private readonly podStatuses?: WatchedCache<PodStatusItem>,
  ) {}

  /** This node's pod status objects: from the watch once it has listed, else one LIST. */
  async podStatusItems(): Promise<PodStatusItem[]> {
    if (this.podStatuses?.everSynced) return this.podStatuses.values();
    try {
      const list = await this.api.get<KubeList<PodStatusItem>>(podStatusPath(), {
        labelSelector: `${NODE_NAME_LABEL}=${this.options.nodeId}`,
      });
      return list.items ?? [];
    } catch (err) {
      throw fromKubeError(err, 'list SecretProviderClassPodStatuses of this node');
    }
  }

  async list(): Promise<RotationVolume[]> {
    const items = await this.podStatusItems();
    const volumes: RotationVolume[] = [];
    for (const item of items) {
      const { podName, secretProviderClassName: spcName, targetPath: written } = item.status ?? {};
      // Rotation keys its memory by the canonical spelling publishes use.
      const targetPath = written === undefined ? undefined : cleanTargetPath(written);
      if (!podName || !spcName || !targetPath || !(await this.mounter.isMounted(targetPath))) continue;
      const uid = item.metadata.ownerReferences?.find((o) => o.kind === 'Pod')?.uid ?? '';
      const pod = { name: podName, namespace: item.metadata.namespace ?? '', uid, serviceAccountName: '' };
      const spc = await this.classes.get(pod.namespace, spcName).catch(() => undefined);
      // Every round, not only when the volume is due: a class interval longer than the watch's idle time keeps it.
      if (this.readsNodePublishSecret(pod.namespace, podName, targetPath, spcName))
        this.usedSecrets?.ensure(pod.namespace);
      // A refresh is requested on the class or on the pod (from the node's pod cache).
      const requested = this.refreshRequestOf(spc?.annotations, podName, pod.namespace);
      // The first sight of a volume only records the value: an old annotation is no request.
      const handled = this.refreshHandled.get(targetPath);
      const refreshRequested = handled !== undefined && requested !== handled;
      this.refreshHandled.set(targetPath, requested);
      volumes.push({
        targetPath,
        pod,
        spcName,
        provider: spc?.provider ?? '',
        intervalMs: this.intervalOf(spc?.annotations, pod.namespace, spcName),
        refreshRequested,
      });
    }
    this.tokens.retain(new Set(volumes.map((v) => v.pod.uid)));
    const listed = new Set(volumes.map((v) => v.targetPath));
    for (const key of this.refreshHandled.keys()) if (!listed.has(key)) this.refreshHandled.delete(key);
    return volumes;
  }

  /** Whether the volume's refresh reads a nodePublishSecretRef Secret (from the pod cache; false when not cached). */
  private readsNodePublishSecret(namespace: string, podName: string, targetPath: string, spcName: string): boolean {
    const pod = this.pods?.get(podName, namespace);
    return !!pod && !!csiVolumeOf(pod, targetPath, this.options.driverName, spcName)?.nodePublishSecretRef?.name;
  }

  /** A publish that reached the provider answers the refresh requests made before it. */
  notePublished(volume: PublishedVolume): void {
    if (volume.skipped) return;
    const { request, spc } = volume;
    this.refreshHandled.set(
      request.targetPath,
      this.refreshRequestOf(spc.annotations, request.pod.name, request.pod.namespace),
    );
  }

  /** The refresh-requested-at values on the class and on the pod, as one comparable string. */
  private refreshRequestOf(
    classAnnotations: Readonly<Record<string, string>> | undefined,
    podName: string,
    namespace: string,
  ): string {
    return [
      classAnnotations?.[REFRESH_REQUESTED_ANNOTATION],
      this.pods?.get(podName, namespace)?.metadata?.annotations?.[REFRESH_REQUESTED_ANNOTATION],
    ]
      .filter((v): v is string => v !== undefined)
      .join('|');
  }

  async rebuild(volume: RotationVolume): Promise<PublishRequest | undefined> {
    const pod = await this.readPod(volume.pod.namespace, volume.pod.name);
    if (!pod || pod.metadata?.uid !== volume.pod.uid || pod.metadata?.deletionTimestamp) return undefined;
    // A finished pod keeps its volume until kubelet cleans up: nothing to refresh.
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return undefined;
    const csi = csiVolumeOf(pod, volume.targetPath, this.options.driverName, volume.spcName);
    if (!csi) return undefined;
    const serviceAccountName = pod.spec?.serviceAccountName || 'default';
    const podRef = { ...volume.pod, serviceAccountName };
    const volumeContext: Record<string, string> = {
      ...csi.volumeAttributes,
      [POD_NAME_KEY]: podRef.name,
      [POD_NAMESPACE_KEY]: podRef.namespace,
      [POD_UID_KEY]: podRef.uid,
      [SERVICE_ACCOUNT_NAME_KEY]: serviceAccountName,
      [EPHEMERAL_KEY]: 'true',
    };
    const tokens = await this.tokens.tokensFor(podRef, serviceAccountName);
    if (tokens) volumeContext[SERVICE_ACCOUNT_TOKENS_KEY] = tokens;
    const mountGroup = mountGroupOf(pod);
    return {
      volumeId: `rotation-${volume.pod.uid}`,
      targetPath: volume.targetPath,
      spcName: volume.spcName,
      pod: podRef,
      volumeContext,
      secrets: csi.nodePublishSecretRef?.name
        ? await this.readSecretData(podRef.namespace, csi.nodePublishSecretRef.name)
        : {},
      ...(mountGroup === undefined ? {} : { mountGroup }),
    };
  }

  private intervalOf(
    annotations: Readonly<Record<string, string>> | undefined,
    namespace: string,
    spcName: string,
  ): number {
    const raw = annotations?.[ROTATION_INTERVAL_ANNOTATION];
    const { ms, invalid } = annotatedInterval(raw, this.options.defaultIntervalMs);
    if (invalid)
      this.logger.warn('ignoring an invalid rotation interval annotation', {
        spc: `${namespace}/${spcName}`,
        value: (raw ?? '').slice(0, 40),
      });
    return ms;
  }

  private async readPod(namespace: string, name: string): Promise<Pod | undefined> {
    const cached = this.pods?.get(name, namespace);
    if (cached) return cached;
    try {
      return await this.api.get<Pod>(corePath('pods', namespace, name));
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw fromKubeError(err, `get Pod ${namespace}/${name}`);
    }
  }

  /** The nodePublishSecretRef Secret's data, decoded; it lives in the pod's namespace only. */
  private async readSecretData(namespace: string, name: string): Promise<Record<string, string>> {
    try {
      this.usedSecrets?.ensure(namespace);
      const cached = this.usedSecrets?.lookup(namespace, name);
      let secret = cached?.object;
      if (!secret) {
        secret = await this.api.get<Secret>(corePath('secrets', namespace, name));
        // Listed there and still not in the watch: it lacks the label.
        if (cached && !this.warnedUnlabelled.has(`${namespace}/${name}`)) {
          this.warnedUnlabelled.add(`${namespace}/${name}`);
          this.logger.warn(
            'nodePublishSecretRef Secret is not labelled secrets-store.csi.k8s.io/used=true: read with a GET on every refresh',
            { secret: `${namespace}/${name}` },
          );
        }
      }
      return Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      );
    } catch (err) {
      throw fromKubeError(err, `get nodePublishSecretRef Secret ${namespace}/${name}`, 'rotation-reconciler');
    }
  }
}
