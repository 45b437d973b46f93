import { resourcePath } from './client/kube-api.js';
import { SECRETS_STORE_GROUP, SECRETS_STORE_VERSION, SPC_PLURAL, SPCPS_PLURAL } from './constants.js';

// REST paths of the objects the driver reads and writes. No namespace: across all namespaces.

/** SecretProviderClassPodStatus objects (or one). */
export function podStatusPath(namespace?: string, name?: string): string {
  return resourcePath({ group: SECRETS_STORE_GROUP, version: SECRETS_STORE_VERSION, resource: SPCPS_PLURAL, namespace, name });
}

/** SecretProviderClass objects (or one). */
export function secretProviderClassPath(namespace?: string, name?: string): string {
  return resourcePath({ group: SECRETS_STORE_GROUP, version: SECRETS_STORE_VERSION, resource: SPC_PLURAL, namespace, name });
}

/** A core/v1 resource: pods, secrets, events, serviceaccounts (with a subresource such as token). */
export function corePath(resource: string, namespace?: string, name?: string, subresource?: string): string {
  return resourcePath({ version: 'v1', resource, namespace, name, subresource });
}

/** An apps/v1 resource: deployments, statefulsets, daemonsets, replicasets. */
export function appsPath(resource: string, namespace: string, name: string): string {
  return resourcePath({ group: 'apps', version: 'v1', resource, namespace, name });
}

/** A storage.k8s.io/v1 CSIDriver. */
export function csiDriverPath(name: string): string {
  return resourcePath({ group: 'storage.k8s.io', version: 'v1', resource: 'csidrivers', name });
}
