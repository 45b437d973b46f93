import type { KubeObject, OwnerReference } from '../k8s/client/types.js';

/** What rotation and the Secret resync read of a SecretProviderClassPodStatus. */
export interface PodStatusItem extends KubeObject {
  metadata: {
    namespace: string;
    name?: string;
    uid?: string;
    resourceVersion?: string;
    ownerReferences?: OwnerReference[];
  };
  status?: { podName?: string; secretProviderClassName?: string; targetPath?: string; secretSyncError?: string };
}

/** Keeps what rotation and the Secret resync read of a pod status object (not its object versions). */
export function slimPodStatus(item: PodStatusItem): PodStatusItem {
  const { podName, secretProviderClassName, targetPath, secretSyncError } = item.status ?? {};
  const { name, namespace, uid, resourceVersion, ownerReferences } = item.metadata;
  return {
    metadata: { name, namespace, uid, resourceVersion, ownerReferences },
    status: { podName, secretProviderClassName, targetPath, secretSyncError },
  };
}
