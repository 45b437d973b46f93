// The parts of Kubernetes objects the driver reads and writes, as the API serves them in
// JSON (timestamps are RFC 3339 strings). Fields the driver never reads are left out.

/** metadata.ownerReferences[] */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metadata */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
  managedFields?: unknown[];
}

/** Any object: what list+watch caches hold. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A list response (metadata.continue when paginated). */
export interface KubeList<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** pod.spec.volumes[].csi */
export interface CsiVolumeSource {
  driver: string;
  volumeAttributes?: Record<string, string>;
  nodePublishSecretRef?: { name?: string };
}

/** core/v1 Pod */
export interface Pod extends KubeObject {
  spec?: {
    serviceAccountName?: string;
    nodeName?: string;
    /** fsGroup: what kubelet sends as volume_mount_group (rotation rebuilds it from here). */
    securityContext?: { fsGroup?: number };
    volumes?: { name: string; csi?: CsiVolumeSource }[];
  };
  status?: { phase?: string };
}

/** core/v1 Secret (data values are base64) */
export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** storage.k8s.io/v1 CSIDriver */
export interface CsiDriver extends KubeObject {
  spec?: { tokenRequests?: { audience: string; expirationSeconds?: number }[]; requiresRepublish?: boolean };
}

/** authentication.k8s.io/v1 TokenRequest as returned */
export interface TokenRequest extends KubeObject {
  status?: { token?: string; expirationTimestamp?: string };
}

/** apps/v1 Deployment, StatefulSet, DaemonSet or ReplicaSet: the pod template's metadata */
export interface Workload extends KubeObject {
  spec?: { template?: { metadata?: { annotations?: Record<string, string>; [field: string]: unknown } } };
}

/** A watch event (`type` ERROR carries a Status as `object`). */
export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}
