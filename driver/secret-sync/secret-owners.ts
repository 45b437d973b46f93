import type { OwnerReference } from '../k8s/client/types.js';
import { SECRETS_STORE_GROUP, SECRETS_STORE_VERSION } from '../k8s/constants.js';

/** Owner references for a synced Secret: the pod's owners, or the pod status object for a bare pod. */
export function secretOwners(
  podOwners: readonly OwnerReference[] | undefined,
  status: { metadata: { name: string; uid?: string | undefined } },
): OwnerReference[] {
  if (podOwners && podOwners.length > 0) {
    // Copied without controller/blockOwnerDeletion: the Secret is not the owner's to manage.
    return podOwners.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid }));
  }
  return [
    {
      apiVersion: `${SECRETS_STORE_GROUP}/${SECRETS_STORE_VERSION}`,
      kind: 'SecretProviderClassPodStatus',
      name: status.metadata.name,
      uid: status.metadata.uid ?? '',
    },
  ];
}
