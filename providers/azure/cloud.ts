// The Azure clouds, as Azure's provider v1.8.2 picks them: go-autorest v0.11.30
// azure.EnvironmentFromName (autorest/azure/environments.go). Names are matched after
// Go's strings.ToUpper against AZURECLOUD, AZUREPUBLICCLOUD, AZUREUSGOVERNMENT,
// AZUREUSGOVERNMENTCLOUD, AZURECHINACLOUD, AZUREGERMANCLOUD; AzureStackCloud
// (strings.EqualFold) is read from the JSON file the class's `cloudEnvFileName` names
// (upstream sets AZURE_ENVIRONMENT_FILEPATH to it, else the provider's own variable).
// Only the three values the provider uses are kept: the vault DNS suffix, the Entra
// authority and the Key Vault resource (upstream: KeyVaultEndpoint without its "/").
import { quoted } from '../../lib/untrusted-text.js';
import { SscError } from '../../lib/errors.js';
import { invalidParameter } from './azure-errors.js';
import { goEqualFold } from './go-strings.js';

/** What a Mount needs to know of a cloud. */
export interface AzureCloud {
  /** go-autorest's Environment.Name (`AzurePublicCloud`), or the stack file's `name`. */
  readonly name: string;
  /** Host suffix of a vault: `https://<keyvaultName>.<keyVaultDnsSuffix>/`. */
  readonly keyVaultDnsSuffix: string;
  /** Microsoft Entra ID authority host (`ActiveDirectoryEndpoint`), ends in "/". */
  readonly authorityHost: string;
  /** The Key Vault resource tokens are requested for (scope `<resource>/.default`), no trailing "/". */
  readonly keyVaultResource: string;
}

/** The name that selects an Azure Stack Hub environment file. */
export const AZURE_STACK_CLOUD = 'AzureStackCloud';

const PUBLIC: AzureCloud = {
  name: 'AzurePublicCloud',
  keyVaultDnsSuffix: 'vault.azure.net',
  authorityHost: 'https://login.microsoftonline.com/',
  keyVaultResource: 'https://vault.azure.net',
};
const US_GOVERNMENT: AzureCloud = {
  name: 'AzureUSGovernmentCloud',
  keyVaultDnsSuffix: 'vault.usgovcloudapi.net',
  authorityHost: 'https://login.microsoftonline.us/',
  keyVaultResource: 'https://vault.usgovcloudapi.net',
};
const CHINA: AzureCloud = {
  name: 'AzureChinaCloud',
  keyVaultDnsSuffix: 'vault.azure.cn',
  authorityHost: 'https://login.chinacloudapi.cn/',
  keyVaultResource: 'https://vault.azure.cn',
};
const GERMAN: AzureCloud = {
  name: 'AzureGermanCloud',
  keyVaultDnsSuffix: 'vault.microsoftazure.de',
  authorityHost: 'https://login.microsoftonline.de/',
  keyVaultResource: 'https://vault.microsoftazure.de',
};

/** go-autorest's `environments` map: upper-cased names to clouds. */
const CLOUDS: ReadonlyMap<string, AzureCloud> = new Map([
  ['AZURECHINACLOUD', CHINA],
  ['AZUREGERMANCLOUD', GERMAN],
  ['AZURECLOUD', PUBLIC],
  ['AZUREPUBLICCLOUD', PUBLIC],
  ['AZUREUSGOVERNMENT', US_GOVERNMENT],
  ['AZUREUSGOVERNMENTCLOUD', US_GOVERNMENT],
]);

/** Where an Azure Stack environment comes from, and how to read it (the provider's file system; a table in tests). */
export interface StackEnvironmentSource {
  /** The class's `cloudEnvFileName`, else the provider's AZURE_ENVIRONMENT_FILEPATH; undefined when neither. */
  readonly path: string | undefined;
  /** The file's text; throws when it cannot be read. */
  readonly read: (path: string) => string;
}

/**
 * The cloud `name` selects (go-autorest EnvironmentFromName), reading the Azure Stack
 * file through `stack` for AzureStackCloud. Throws INVALID_ARGUMENT naming `parameter`
 * (`cloudName` or `--cloud-name`) and the names it accepts.
 */
export function resolveCloud(name: string, parameter: string, stack: StackEnvironmentSource): AzureCloud {
  if (goEqualFold(name, AZURE_STACK_CLOUD)) return stackCloud(stack);
  // Go's strings.ToUpper maps ı (U+0131) to I and ſ (U+017F) to S, as toUpperCase does.
  const cloud = CLOUDS.get(name.toUpperCase());
  if (!cloud)
    throw invalidParameter(
      `${parameter} ${quoted(name, 64)} is not a cloud: use AzurePublicCloud, ` +
        `AzureUSGovernmentCloud, AzureChinaCloud, AzureGermanCloud or AzureStackCloud (with ` +
        `cloudEnvFileName)`,
    );
  return cloud;
}

function stackCloud(stack: StackEnvironmentSource): AzureCloud {
  if (stack.path === undefined || stack.path === '')
    throw invalidParameter(
      `cloudName ${AZURE_STACK_CLOUD} needs cloudEnvFileName: the path of the environment JSON file in the provider's container`,
    );
  const file = `cloudEnvFileName ${quoted(stack.path, 256)}`;
  let text: string;
  try {
    text = stack.read(stack.path);
  } catch (err) {
    if (err instanceof SscError) throw err;
    // Only the errno code: the message of a failed read is the path again, or worse.
    const code =
      typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
        ? (err as { code: string }).code
        : 'unreadable';
    throw invalidParameter(`${file} cannot be read (${code})`);
  }
  return parseStackEnvironment(text, file);
}

/**
 * An Azure Stack environment from go-autorest's Environment JSON (`keyVaultDNSSuffix`,
 * `activeDirectoryEndpoint`, `keyVaultEndpoint`, or `resourceIdentifiers.keyVault`).
 * Throws INVALID_ARGUMENT naming `file` and the field; shows no more of the file than
 * the value of a field it refuses (at most 128 characters).
 */
export function parseStackEnvironment(text: string, file: string): AzureCloud {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: it is not shown.
    throw invalidParameter(`${file} is not valid JSON (an Azure environment file, as go-autorest reads it)`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw invalidParameter(`${file} is not a JSON object`);
  const env = json as Record<string, unknown>;
  const field = (value: unknown, name: string): string | undefined => {
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw invalidParameter(`${file}: ${name} must be a string`);
    return value;
  };
  const ids =
    typeof env['resourceIdentifiers'] === 'object' && env['resourceIdentifiers'] !== null
      ? (env['resourceIdentifiers'] as Record<string, unknown>)
      : {};
  const suffix = field(env['keyVaultDNSSuffix'], 'keyVaultDNSSuffix');
  const authority = field(env['activeDirectoryEndpoint'], 'activeDirectoryEndpoint');
  const resource =
    field(env['keyVaultEndpoint'], 'keyVaultEndpoint') ?? field(ids['keyVault'], 'resourceIdentifiers.keyVault');
  if (suffix === undefined) throw invalidParameter(`${file} has no keyVaultDNSSuffix`);
  if (!/^[A-Za-z0-9.-]+$/.test(suffix) || suffix.startsWith('.') || suffix.endsWith('.'))
    throw invalidParameter(`${file}: keyVaultDNSSuffix ${quoted(suffix, 128)} is not a DNS suffix`);
  if (authority === undefined) throw invalidParameter(`${file} has no activeDirectoryEndpoint`);
  if (!isHttpsUrl(authority))
    throw invalidParameter(`${file}: activeDirectoryEndpoint ${quoted(authority, 128)} must be an https:// URL`);
  if (resource === undefined)
    throw invalidParameter(`${file} has neither keyVaultEndpoint nor resourceIdentifiers.keyVault`);
  if (!isHttpsUrl(resource))
    throw invalidParameter(`${file}: keyVaultEndpoint ${quoted(resource, 128)} must be an https:// URL`);
  return {
    name: field(env['name'], 'name') ?? AZURE_STACK_CLOUD,
    keyVaultDnsSuffix: suffix,
    authorityHost: authority.endsWith('/') ? authority : `${authority}/`,
    keyVaultResource: resource.replace(/\/$/, ''),
  };
}

function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.username === '' && url.password === '' && !/\s/.test(value);
  } catch {
    return false;
  }
}

/**
 * True for the authority of a built-in cloud, which Entra's instance discovery knows;
 * an Azure Stack Hub authority (AD FS or its own Entra endpoint) is used as given.
 */
export function isKnownAuthority(authorityHost: string): boolean {
  return [...CLOUDS.values()].some((c) => c.authorityHost === authorityHost);
}
