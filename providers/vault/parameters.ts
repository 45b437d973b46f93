// SecretProviderClass parameters of the vault provider, named and read as HashiCorp's
// vault-csi-provider reads them (internal/config/config.go, parseParameters; checked at
// v1.7.4): every value is a string; `vaultKubernetesMountPath` is the older name of
// `vaultAuthMountPath` and setting both is an error; `vaultSkipTLSVerify` is parsed with
// Go's strconv.ParseBool; `audience` picks the token from
// `csi.storage.k8s.io/serviceAccount.tokens`, "vault" when empty; `roleName` and a
// non-empty `objects` are required. Where HashiCorp's provider fails later or not at all
// (a bad address, a client certificate without its key, a bad encoding) this fails at
// once with INVALID_ARGUMENT naming the parameter.
import { quoted } from '../../lib/untrusted-text.js';
import { goBoolParameter } from '../framework/parameter-errors.js';
import {
  POD_NAME_ATTRIBUTE,
  POD_NAMESPACE_ATTRIBUTE,
  POD_UID_ATTRIBUTE,
  podInfoMissing,
  SERVICE_ACCOUNT_ATTRIBUTE,
} from '../framework/pod-info.js';
import type { TokenRequester } from '../framework/sa-token.js';
import { parseObjects, type VaultObject } from './objects.js';
import { invalidParameter } from './vault-errors.js';

/** TLS settings of one layer (environment, flags or class); undefined fields are not set there. */
export interface VaultTlsLayer {
  readonly caCertPath?: string | undefined;
  readonly caDirectory?: string | undefined;
  readonly serverName?: string | undefined;
  readonly clientCertPath?: string | undefined;
  readonly clientKeyPath?: string | undefined;
  readonly skipVerify?: boolean | undefined;
}

/** The pod a Mount is for, from the volume context the driver adds to the attributes. */
export interface PodInfo {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly serviceAccountName: string;
}

/** The vault parameters of a SecretProviderClass (one layer: unset values are undefined). */
export interface VaultClassParameters {
  readonly roleName: string;
  readonly vaultAddress: string | undefined;
  readonly vaultNamespace: string | undefined;
  readonly vaultAuthMountPath: string | undefined;
  /** Audience of the service-account token used to log in ("vault" when not set). */
  readonly audience: string;
  readonly tls: VaultTlsLayer;
  readonly objects: readonly VaultObject[];
  /** Things that were ignored (unknown object fields), for the log. */
  readonly warnings: readonly string[];
  readonly pod: PodInfo;
}

/** The token audience used when the class sets none, as in HashiCorp's provider. */
export const DEFAULT_AUDIENCE = 'vault';

/** How the vault provider is named in service-account token errors (framework sa-token.ts). */
export const VAULT_TOKEN_REQUESTER: TokenRequester = {
  provider: 'vault',
  audienceNote: "the class's audience parameter picks it",
};

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `value` is not a Vault address (an http:// or https:// URL without credentials, query or fragment), or undefined. */
export function addressProblem(value: string): string | undefined {
  // new URL() would trim or drop them silently, and they would reach messages and logs.
  if (CONTROL.test(value) || /\s/.test(value)) return 'must not hold spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a URL such as https://vault.example.com:8200';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (url.search !== '' || url.hash !== '') return 'must not have a query or fragment';
  return undefined;
}

/** `value` as a mount path (`kubernetes`, `k8s/cluster-1`): slashes at either end dropped. */
export function normalizeMountPath(value: string): string | { readonly problem: string } {
  const path = value.replace(/^\/+|\/+$/g, '');
  if (CONTROL.test(path) || /[?#%\s]/.test(path))
    return { problem: 'must be a mount path such as "kubernetes" (no spaces, "?", "#" or "%")' };
  if (path === '' || path.split('/').some((s) => s === '' || s === '.' || s === '..'))
    return { problem: 'must be a mount path such as "kubernetes" or "k8s/cluster-1"' };
  return path;
}

/** Why `value` cannot be a Vault namespace (sent as the X-Vault-Namespace header), or undefined. */
export function namespaceProblem(value: string): string | undefined {
  return CONTROL.test(value) ? 'must not hold control characters' : undefined;
}

/** A string parameter; '' counts as not set, as in HashiCorp's provider. */
function param(attributes: Readonly<Record<string, string>>, name: string): string | undefined {
  const value = attributes[name];
  return value === undefined || value === '' ? undefined : value;
}

function authMountPath(attributes: Readonly<Record<string, string>>): string | undefined {
  const hasOld = Object.hasOwn(attributes, 'vaultKubernetesMountPath');
  const hasNew = Object.hasOwn(attributes, 'vaultAuthMountPath');
  if (hasOld && hasNew)
    throw invalidParameter(
      'vaultAuthMountPath and vaultKubernetesMountPath are both set; set only vaultAuthMountPath (vaultKubernetesMountPath is its older name)',
    );
  const name = hasOld ? 'vaultKubernetesMountPath' : 'vaultAuthMountPath';
  const value = param(attributes, name);
  if (value === undefined) return undefined;
  const path = normalizeMountPath(value);
  if (typeof path !== 'string') throw invalidParameter(`${name} ${quoted(value, 64)} ${path.problem}`);
  return path;
}

function tlsParameters(attributes: Readonly<Record<string, string>>): VaultTlsLayer {
  const clientCertPath = param(attributes, 'vaultTLSClientCertPath');
  const clientKeyPath = param(attributes, 'vaultTLSClientKeyPath');
  if ((clientCertPath === undefined) !== (clientKeyPath === undefined)) {
    const [missing, given] =
      clientCertPath === undefined
        ? ['vaultTLSClientCertPath', 'vaultTLSClientKeyPath']
        : ['vaultTLSClientKeyPath', 'vaultTLSClientCertPath'];
    throw invalidParameter(`${missing} is required with ${given}: a client certificate needs its key`);
  }
  const skip = param(attributes, 'vaultSkipTLSVerify');
  const skipVerify = skip === undefined ? undefined : goBoolParameter(skip, 'vaultSkipTLSVerify', invalidParameter);
  return {
    caCertPath: param(attributes, 'vaultCACertPath'),
    caDirectory: param(attributes, 'vaultCADirectory'),
    serverName: param(attributes, 'vaultTLSServerName'),
    clientCertPath,
    clientKeyPath,
    skipVerify,
  };
}

/**
 * Reads the vault parameters from a Mount's attributes (class parameters overlaid with
 * the volume context). Throws INVALID_ARGUMENT (`InvalidParameters`) naming the
 * parameter, and the object by index and objectName, for every bad value.
 */
export function parseVaultParameters(attributes: Readonly<Record<string, string>>): VaultClassParameters {
  const roleName = param(attributes, 'roleName');
  if (roleName === undefined) throw invalidParameter('roleName is required: the Vault role to log in as');
  const vaultAddress = param(attributes, 'vaultAddress');
  const problem = vaultAddress === undefined ? undefined : addressProblem(vaultAddress);
  // The value is not shown: it may hold credentials.
  if (problem) throw invalidParameter(`vaultAddress ${problem}`);
  const vaultNamespace = param(attributes, 'vaultNamespace');
  const nsProblem = vaultNamespace === undefined ? undefined : namespaceProblem(vaultNamespace);
  if (nsProblem) throw invalidParameter(`vaultNamespace ${nsProblem}`);
  const vaultAuthMountPath = authMountPath(attributes);
  const tls = tlsParameters(attributes);
  const { objects, warnings } = parseObjects(attributes['objects']);
  return {
    roleName,
    vaultAddress,
    vaultNamespace,
    vaultAuthMountPath,
    audience: param(attributes, 'audience') ?? DEFAULT_AUDIENCE,
    tls,
    objects,
    warnings,
    pod: {
      name: attributes[POD_NAME_ATTRIBUTE] ?? '',
      namespace: attributes[POD_NAMESPACE_ATTRIBUTE] ?? '',
      uid: attributes[POD_UID_ATTRIBUTE] ?? '',
      serviceAccountName: attributes[SERVICE_ACCOUNT_ATTRIBUTE] ?? '',
    },
  };
}

/**
 * Throws FAILED_PRECONDITION (`PodInfoMissing`) naming the attribute when a Mount lacks
 * the pod's namespace or service account: the identity is made of them, and without them
 * every pod would share one identity (and one Vault token). Not part of parsing, so a
 * class can be checked without a pod.
 */
export function requirePodIdentity(pod: PodInfo): void {
  for (const [name, value] of [
    [POD_NAMESPACE_ATTRIBUTE, pod.namespace],
    [SERVICE_ACCOUNT_ATTRIBUTE, pod.serviceAccountName],
  ] as const) {
    if (value === '') throw podInfoMissing('vault', name, "the pod's service account is the Vault identity");
  }
}
