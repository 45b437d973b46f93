// Stand-in for the Azure clouds' Key Vault and Entra host names (test only; no real Azure can
// be reached here, see docs/conformance.md). Values as in the Azure SDKs' and go-autorest's
// cloud tables: vault DNS suffix, the Key Vault resource (the challenge's `resource` and the
// token audience), the Entra login host, and the v1 token issuer prefix.

/** One Azure cloud as the stand-in serves it. */
export interface StandInCloud {
  readonly name: 'AzurePublicCloud' | 'AzureUSGovernmentCloud' | 'AzureChinaCloud';
  readonly vaultSuffix: string;
  readonly loginHost: string;
  readonly keyVaultResource: string;
  readonly managementResource: string;
  readonly stsPrefix: string;
}

/** The clouds the stand-in answers for. */
export const CLOUDS: readonly StandInCloud[] = [
  {
    name: 'AzurePublicCloud',
    vaultSuffix: 'vault.azure.net',
    loginHost: 'login.microsoftonline.com',
    keyVaultResource: 'https://vault.azure.net',
    managementResource: 'https://management.azure.com/',
    stsPrefix: 'https://sts.windows.net/',
  },
  {
    name: 'AzureUSGovernmentCloud',
    vaultSuffix: 'vault.usgovcloudapi.net',
    loginHost: 'login.microsoftonline.us',
    keyVaultResource: 'https://vault.usgovcloudapi.net',
    managementResource: 'https://management.usgovcloudapi.net/',
    stsPrefix: 'https://sts.windows.net/',
  },
  {
    name: 'AzureChinaCloud',
    vaultSuffix: 'vault.azure.cn',
    loginHost: 'login.chinacloudapi.cn',
    keyVaultResource: 'https://vault.azure.cn',
    managementResource: 'https://management.chinacloudapi.cn/',
    stsPrefix: 'https://sts.chinacloudapi.cn/',
  },
];

/** The public cloud (the default everywhere). */
export const PUBLIC_CLOUD = CLOUDS[0] as StandInCloud;

/** The cloud whose vault suffix `host` ends with, and the vault name before it. */
export function vaultHost(host: string): { cloud: StandInCloud; vault: string } | undefined {
  for (const cloud of CLOUDS) {
    const suffix = `.${cloud.vaultSuffix}`;
    if (host.endsWith(suffix) && host.length > suffix.length) {
      const vault = host.slice(0, -suffix.length);
      if (!vault.includes('.')) return { cloud, vault };
    }
  }
  return undefined;
}

/** The cloud whose Entra login host is `host`. */
export function loginCloud(host: string): StandInCloud | undefined {
  return CLOUDS.find((c) => c.loginHost === host);
}

/** Every DNS name the stand-in's certificate must cover (wildcards for vault hosts). */
export function standInDnsNames(): string[] {
  return CLOUDS.flatMap((c) => [c.loginHost, `*.${c.vaultSuffix}`]);
}
