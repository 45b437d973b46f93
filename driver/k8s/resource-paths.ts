import { SscError } from '../../lib/errors.js';
import { resourcePath, type ResourceRef } from './client/kube-api.js';
import { SECRETS_STORE_GROUP, SECRETS_STORE_VERSION, SPC_PLURAL, SPCPS_PLURAL } from './constants.js';

// REST paths of the objects the driver reads and writes. No namespace: across all namespaces.
// Every name and namespace is checked here, before a path exists: `new URL` resolves "."
// and ".." segments, so a Secret named "." would GET the namespace's Secret list, and ".."
// the namespace itself. Names follow the API server's own rules, so nothing valid is lost.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_RULE =
  "must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)";

/** Why `name` cannot name a Kubernetes object (a DNS-1123 subdomain, as Secrets, Pods and custom resources need), or undefined. */
export function objectNameProblem(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if (name.length > 253) return 'must be at most 253 characters';
  return name.split('.').every((label) => DNS1123_LABEL.test(label)) ? undefined : SUBDOMAIN_RULE;
}

/** Why `namespace` cannot name a namespace (a DNS-1123 label), or undefined. */
export function namespaceProblem(namespace: string): string | undefined {
  if (namespace === '') return 'must not be empty';
  if (namespace.length > 63) return 'must be at most 63 characters';
  return DNS1123_LABEL.test(namespace)
    ? undefined
    : "must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)";
}

/** The kind named in errors, by resource. */
const KINDS: Readonly<Record<string, string>> = {
  pods: 'Pod',
  secrets: 'Secret',
  events: 'Event',
  serviceaccounts: 'ServiceAccount',
  [SPC_PLURAL]: 'SecretProviderClass',
  [SPCPS_PLURAL]: 'SecretProviderClassPodStatus',
  deployments: 'Deployment',
  statefulsets: 'StatefulSet',
  daemonsets: 'DaemonSet',
  replicasets: 'ReplicaSet',
  csidrivers: 'CSIDriver',
};

function invalid(what: string, value: string, problem: string): SscError {
  const shown = value.length > 64 ? `${JSON.stringify(value.slice(0, 64)).slice(0, -1)}…"` : JSON.stringify(value);
  return new SscError('invalid-argument', `invalid ${what} ${shown}: ${problem}`, { reason: 'InvalidObjectName' });
}

/** resourcePath after checking the namespace and name; throws INVALID_ARGUMENT (InvalidObjectName) naming which. */
function checkedPath(ref: ResourceRef): string {
  const nsProblem = ref.namespace === undefined ? undefined : namespaceProblem(ref.namespace);
  if (nsProblem) throw invalid('namespace', ref.namespace as string, nsProblem);
  const nameProblem = ref.name === undefined ? undefined : objectNameProblem(ref.name);
  if (nameProblem) throw invalid(`${KINDS[ref.resource] ?? ref.resource} name`, ref.name as string, nameProblem);
  return resourcePath(ref);
}

/** SecretProviderClassPodStatus objects (or one). */
export function podStatusPath(namespace?: string, name?: string): string {
  return checkedPath({
    group: SECRETS_STORE_GROUP,
    version: SECRETS_STORE_VERSION,
    resource: SPCPS_PLURAL,
    namespace,
    name,
  });
}

/** SecretProviderClass objects (or one). */
export function secretProviderClassPath(namespace?: string, name?: string): string {
  return checkedPath({
    group: SECRETS_STORE_GROUP,
    version: SECRETS_STORE_VERSION,
    resource: SPC_PLURAL,
    namespace,
    name,
  });
}

/** A core/v1 resource: pods, secrets, events, serviceaccounts (with a subresource such as token). */
export function corePath(resource: string, namespace?: string, name?: string, subresource?: string): string {
  return checkedPath({ version: 'v1', resource, namespace, name, subresource });
}

/** An apps/v1 resource: deployments, statefulsets, daemonsets, replicasets. */
export function appsPath(resource: string, namespace: string, name: string): string {
  return checkedPath({ group: 'apps', version: 'v1', resource, namespace, name });
}

/** A storage.k8s.io/v1 CSIDriver. */
export function csiDriverPath(name: string): string {
  return checkedPath({ group: 'storage.k8s.io', version: 'v1', resource: 'csidrivers', name });
}
