// Settings of the vault provider's Vault client that its unit and integration tests share.
import type { VaultIdentity } from '../../providers/vault/identity.js';
import type { VaultTlsConfig } from '../../providers/vault/settings.js';

/** TLS as configured when no TLS parameter, flag or VAULT_* variable is set: verified, no client certificate. */
export const NO_VAULT_TLS: VaultTlsConfig = {
  caCertPath: undefined,
  caDirectory: undefined,
  serverName: undefined,
  clientCertPath: undefined,
  clientKeyPath: undefined,
  skipVerify: false,
};

/** Service account shop/web logging in as role `app` (audience `vault`, Kubernetes auth) at https://vault:8200. */
export const TEST_VAULT_IDENTITY: VaultIdentity = {
  vaultAddress: 'https://vault:8200',
  vaultNamespace: undefined,
  vaultAuthMountPath: 'kubernetes',
  roleName: 'app',
  audience: 'vault',
  serviceAccount: 'shop/web',
  tls: NO_VAULT_TLS,
};
