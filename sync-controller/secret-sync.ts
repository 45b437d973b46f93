import type { KubeObject } from '../driver/k8s/client/types.js';

/** API group and version of SecretSync, as upstream's secrets-store-sync-controller serves it. */
export const SECRET_SYNC_API_VERSION = 'secret-sync.x-k8s.io/v1alpha1';
/** The kind. */
export const SECRET_SYNC_KIND = 'SecretSync';
/** Field manager of every write to a synced Secret (upstream's). */
export const FIELD_MANAGER = 'secrets-store-sync-controller';
/** Label on every synced Secret (value ""), and the reserved label/annotation prefix. */
export const CONTROLLER_LABEL = 'secrets-store.sync.x-k8s.io';

/** spec.secretObject.data[] */
export interface SecretObjectData {
  readonly sourcePath: string;
  readonly targetKey: string;
}

/** spec.secretObject */
export interface SyncedSecretObject {
  readonly type?: string;
  readonly data: readonly SecretObjectData[];
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A status condition (metav1.Condition). */
export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

/** status */
export interface SecretSyncStatus {
  readonly syncHash?: string;
  readonly lastSuccessfulSyncTime?: string;
  readonly conditions?: readonly Condition[];
}

/** A SecretSync object (secret-sync.x-k8s.io/v1alpha1), the fields the controller reads. */
export interface SecretSync extends KubeObject {
  metadata?: KubeObject['metadata'] & { generation?: number };
  spec: {
    readonly secretProviderClassName: string;
    readonly serviceAccountName: string;
    readonly secretObject: SyncedSecretObject;
    readonly forceSynchronization?: string;
    readonly secretSyncControllerName?: string;
  };
  status?: SecretSyncStatus;
}

/** API path of SecretSyncs (all namespaces, one namespace, or one object and its subresource). */
export function secretSyncPath(namespace?: string, name?: string, subresource?: string): string {
  let path = '/apis/secret-sync.x-k8s.io/v1alpha1';
  if (namespace !== undefined) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += '/secretsyncs';
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}
