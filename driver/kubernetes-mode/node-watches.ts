// The list+watches of a driver in Kubernetes mode: two of this node's objects (pods by
// spec.nodeName, pod status objects by the node label; reconciler rotation only) and, per
// namespace with volumes on the node, its classes and its used=true Secrets: the
// nodePublishSecretRef Secrets (reconciler rotation) and the Secrets the driver syncs
// (labelled used=true as well as managed=true, secret-sync.ts), one watch for both.
// Nothing is watched cluster-wide. So a node watches at most 2 + namespaces + namespaces
// whose volumes use Secrets (kubernetes-mode.ts starts them). The cluster benchmark's
// simulated nodes open exactly these (bench/cluster-sim.ts).
import { slimPodStatus, type PodStatusItem } from '../pod-status/pod-status-item.js';
import type { KubeObject, Pod, Secret } from '../k8s/client/types.js';
import { MANAGED_LABEL, NODE_NAME_LABEL, USED_SECRET_LABEL } from '../k8s/constants.js';
import { corePath, podStatusPath, secretProviderClassPath } from '../k8s/resource-paths.js';
import { withoutManagedFields, type WatchedCacheSpec } from '../k8s/watched-cache.js';

/** What rotation reads of a cached Pod: metadata, its CSI volumes, service account, fsGroup, phase. */
export function slimPod(pod: Pod): Pod {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  return {
    metadata: withoutManagedFields(pod).metadata ?? {},
    spec: {
      ...(pod.spec?.serviceAccountName !== undefined ? { serviceAccountName: pod.spec.serviceAccountName } : {}),
      ...(fsGroup !== undefined ? { securityContext: { fsGroup } } : {}),
      volumes: (pod.spec?.volumes ?? []).filter((v) => v.csi).map((v) => ({ name: v.name, csi: v.csi })),
    },
    ...(pod.status?.phase !== undefined ? { status: { phase: pod.status.phase } } : {}),
  };
}

/** This node's pods (reconciler rotation: annotations, volumes, owners). */
export function podWatch(nodeId: string): WatchedCacheSpec<Pod> {
  return { what: 'Pod', path: corePath('pods'), fieldSelector: `spec.nodeName=${nodeId}`, slim: slimPod };
}

/** This node's pod status objects: the volumes rotation and Secret resync go over. */
export function podStatusWatch(nodeId: string): WatchedCacheSpec<PodStatusItem> {
  return {
    what: 'SecretProviderClassPodStatus',
    path: podStatusPath(),
    labelSelector: `${NODE_NAME_LABEL}=${nodeId}`,
    slim: slimPodStatus,
  };
}

/** The SecretProviderClasses of one namespace with volumes on this node. */
export function classWatch(namespace: string): WatchedCacheSpec<KubeObject> {
  return { what: `SecretProviderClass (${namespace})`, path: secretProviderClassPath(namespace) };
}

/**
 * A used=true Secret as Secret sync alone reads it: one the driver does not manage (a
 * nodePublishSecretRef Secret) keeps its metadata only, so no credential is held where
 * kubelet hands them over (republish mode, rotation off).
 */
export function withoutUnmanagedData(secret: Secret): Secret {
  const slim = withoutManagedFields(secret);
  if (slim.metadata?.labels?.[MANAGED_LABEL] === 'true') return slim;
  const { data: _data, ...rest } = slim;
  return rest;
}

/**
 * The Secrets of one namespace labelled used=true: its nodePublishSecretRef Secrets (as
 * upstream asks them to be labelled) and the Secrets this driver syncs there. Without the
 * rotation reconciler (`nodePublishSecretRefs` false) only synced Secrets' data is kept.
 */
export function usedSecretWatch(namespace: string, nodePublishSecretRefs = true): WatchedCacheSpec<Secret> {
  return {
    what: `Secret (used, ${namespace})`,
    path: corePath('secrets', namespace),
    labelSelector: `${USED_SECRET_LABEL}=true`,
    ...(nodePublishSecretRefs ? {} : { slim: withoutUnmanagedData }),
  };
}
