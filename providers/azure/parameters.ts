// SecretProviderClass parameters of the azure provider, named and read as Azure's
// provider v1.8.2 reads them (pkg/provider/types/parameters.go, provider.go): every
// value trimmed with Go's strings.TrimSpace, booleans with strconv.ParseBool,
// `tenantID` winning over the older `tenantId`, `cloudName` defaulting to
// --cloud-name, `keyvaultName` 3-24 of [-A-Za-z0-9]. Auth is resolved to exactly one
// mode (auth-mode.ts); settings upstream ignores or lets race (two modes at once, a
// userAssignedIdentityID without managed identity) are INVALID_ARGUMENT naming both.
import { quoted } from '../../lib/untrusted-text.js';
import { goBoolParameter } from '../framework/parameter-errors.js';
import {
  POD_NAME_ATTRIBUTE,
  POD_NAMESPACE_ATTRIBUTE,
  podInfoMissing,
  SERVICE_ACCOUNT_ATTRIBUTE,
} from '../framework/pod-info.js';
import { resolveAuth, type AzureAuth } from './auth-mode.js';
import { invalidParameter } from './azure-errors.js';
import { resolveCloud, type AzureCloud } from './cloud.js';
import { goTrimSpace } from './go-strings.js';
import { parseKeyVaultObjects, type KeyVaultObject } from './objects.js';

export type { AzureAuth } from './auth-mode.js';

/** The pod a Mount is for (volume context attributes kubelet adds with podInfoOnMount). */
export interface AzurePod {
  readonly name: string;
  readonly namespace: string;
  readonly serviceAccountName: string | undefined;
}

/** Everything one Mount needs to read its objects: where, as whom, and which. */
export interface AzureMountConfig {
  readonly keyvaultName: string;
  /** `https://<keyvaultName>.<cloud's vault DNS suffix>/` (upstream getVaultURL). */
  readonly vaultUrl: string;
  readonly tenantId: string;
  readonly cloud: AzureCloud;
  readonly auth: AzureAuth;
  readonly pod: AzurePod;
  readonly objects: readonly KeyVaultObject[];
  /** Things that were ignored (unknown object fields), for the log. */
  readonly warnings: readonly string[];
}

/** Provider-wide defaults and the one file read a class can ask for (Azure Stack). */
export interface AzureMountDefaults {
  /** --cloud-name: the cloud when the class sets no `cloudName`. */
  readonly cloudName: string;
  /** The provider's AZURE_ENVIRONMENT_FILEPATH: the Azure Stack file when the class names none. */
  readonly environmentFilePath?: string | undefined;
  /** Reads an Azure Stack environment file (readFileSync in the provider; a table in tests). */
  readonly readEnvironmentFile?: ((path: string) => string) | undefined;
}

/** A parameter trimmed as upstream's Get… functions do; '' when not set. */
function param(attributes: Readonly<Record<string, string>>, name: string): string {
  return goTrimSpace(attributes[name] ?? '');
}

/** A boolean parameter as upstream's GetUse… functions: '' is false, else strconv.ParseBool. */
function boolParam(attributes: Readonly<Record<string, string>>, name: string): boolean {
  const text = param(attributes, name);
  return text === '' ? false : goBoolParameter(text, name, invalidParameter);
}

/** `keyvaultName` checked as upstream getVaultURL: 3-24 characters of [-A-Za-z0-9]. */
function keyvaultNameOf(attributes: Readonly<Record<string, string>>): string {
  const name = param(attributes, 'keyvaultName');
  if (name === '') throw invalidParameter('keyvaultName is required: the name of the Key Vault');
  if (name.length < 3 || name.length > 24 || !/^[-A-Za-z0-9]+$/.test(name))
    throw invalidParameter(`keyvaultName ${quoted(name, 32)} must be 3-24 characters of letters, digits and dashes`);
  return name;
}

/** `tenantID`, else the deprecated `tenantId` (upstream GetTenantID): a GUID or a domain name. */
function tenantOf(attributes: Readonly<Record<string, string>>): string {
  const tenant = param(attributes, 'tenantID') || param(attributes, 'tenantId');
  if (tenant === '')
    throw invalidParameter(
      'tenantID is required (tenantId is its older name): the Microsoft Entra tenant of the Key Vault',
    );
  // It becomes a path segment of the authority URL.
  if (!/^[0-9A-Za-z.-]{1,256}$/.test(tenant))
    throw invalidParameter(`tenantID ${quoted(tenant, 64)} must be a tenant id (GUID) or domain name`);
  return tenant;
}

/**
 * Reads a Mount's attributes (class parameters and volume context) and its
 * nodePublishSecretRef `secrets` into an AzureMountConfig. Throws INVALID_ARGUMENT
 * (`InvalidParameters`) naming the parameter, FAILED_PRECONDITION for missing pod
 * information (`PodInfoMissing`) or workload-identity token (`ServiceAccountTokenMissing`,
 * `ServiceAccountTokenMismatch`). No message holds a secret or token value.
 */
export function parseAzureMount(
  attributes: Readonly<Record<string, string>>,
  secrets: Readonly<Record<string, string>>,
  defaults: AzureMountDefaults,
): AzureMountConfig {
  const serviceAccountName = param(attributes, SERVICE_ACCOUNT_ATTRIBUTE);
  const pod: AzurePod = {
    name: param(attributes, POD_NAME_ATTRIBUTE),
    namespace: param(attributes, POD_NAMESPACE_ATTRIBUTE),
    serviceAccountName: serviceAccountName === '' ? undefined : serviceAccountName,
  };
  if (pod.name === '') throw podInfoMissing('azure', POD_NAME_ATTRIBUTE);
  if (pod.namespace === '') throw podInfoMissing('azure', POD_NAMESPACE_ATTRIBUTE);
  if (boolParam(attributes, 'usePodIdentity')) {
    throw invalidParameter(
      'usePodIdentity is not supported (AAD Pod Identity is deprecated upstream): use workload identity (clientID) or useVMManagedIdentity',
    );
  }
  if (boolParam(attributes, 'useAzureTokenProxy')) {
    throw invalidParameter(
      'useAzureTokenProxy is not supported: use workload identity (clientID) or useVMManagedIdentity',
    );
  }
  const useVMManagedIdentity = boolParam(attributes, 'useVMManagedIdentity');
  const keyvaultName = keyvaultNameOf(attributes);
  const tenantId = tenantOf(attributes);
  const classCloud = param(attributes, 'cloudName');
  const envFile = param(attributes, 'cloudEnvFileName') || defaults.environmentFilePath;
  const cloud = resolveCloud(
    classCloud === '' ? defaults.cloudName : classCloud,
    classCloud === '' ? '--cloud-name' : 'cloudName',
    {
      path: envFile,
      read:
        defaults.readEnvironmentFile ??
        (() => {
          throw Object.assign(new Error('no reader'), { code: 'ENOTSUP' });
        }),
    },
  );
  const auth = resolveAuth({
    useVMManagedIdentity,
    userAssignedIdentityId: param(attributes, 'userAssignedIdentityID'),
    clientId: param(attributes, 'clientID'),
    attributes,
    secrets,
    pod,
  });
  const { objects, warnings } = parseKeyVaultObjects(attributes['objects']);
  return {
    keyvaultName,
    vaultUrl: `https://${keyvaultName}.${cloud.keyVaultDnsSuffix}/`,
    tenantId,
    cloud,
    auth,
    pod,
    objects,
    warnings,
  };
}
