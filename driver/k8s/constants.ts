/** The API group of SecretProviderClass and SecretProviderClassPodStatus. */
export const SECRETS_STORE_GROUP = 'secrets-store.csi.x-k8s.io';
/** The stored version the driver reads and writes. */
export const SECRETS_STORE_VERSION = 'v1';
export const SPC_PLURAL = 'secretproviderclasses';
export const SPCPS_PLURAL = 'secretproviderclasspodstatuses';
/** Label on SecretProviderClassPodStatus objects naming the node (upstream's). */
export const NODE_NAME_LABEL = 'internal.secrets-store.csi.k8s.io/node-name';
/** Label on Secrets the driver manages (upstream's). */
export const MANAGED_LABEL = 'secrets-store.csi.k8s.io/managed';
/** Annotation holding the SHA-256 of a synced Secret's data, for change detection. */
export const DATA_DIGEST_ANNOTATION = 'secrets-store.csi.k8s.io/data-sha256';
/** Opt-in on a class: `remove` drops the Secret key of an object the provider stopped returning. */
export const ON_OBJECT_REMOVED_ANNOTATION = 'secrets-store.csi.k8s.io/on-object-removed';
/** Upstream's label for nodePublishSecretRef Secrets the driver may watch. */
export const USED_SECRET_LABEL = 'secrets-store.csi.k8s.io/used';
/** Per-class rotation interval (beyond upstream, opt-in): a Go duration, at least 1s. */
export const ROTATION_INTERVAL_ANNOTATION = 'secrets-store.csi.k8s.io/rotation-poll-interval';
/** On-demand refresh (beyond upstream), on a class or a pod: a new value triggers a refresh. */
export const REFRESH_REQUESTED_ANNOTATION = 'secrets-store.csi.k8s.io/refresh-requested-at';
/** Opt-in on a SecretProviderClass: restart the pods' workload when rotation changed content. */
export const RESTART_ON_ROTATION_ANNOTATION = 'secrets-store.csi.k8s.io/restart-on-rotation';
