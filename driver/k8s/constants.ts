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
