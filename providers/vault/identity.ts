// Who the provider is when it talks to Vault for one Mount. A Vault token belongs to
// exactly one identity: two Mounts share a client (and its token) only when every field
// below is equal, so a token obtained for one service account, role, audience, auth
// mount, namespace, address or TLS setup is never used for another.
import { stableJson } from './stable-json.js';
import type { VaultMountConfig, VaultTlsConfig } from './settings.js';

/** The fields that decide which Vault token a Mount may use. */
export interface VaultIdentity {
  readonly vaultAddress: string;
  readonly vaultNamespace: string | undefined;
  readonly vaultAuthMountPath: string;
  readonly roleName: string;
  /** Audience of the service-account token logged in with: a role may bind one audience and not another. */
  readonly audience: string;
  /** The pod's service account, `namespace/name`. */
  readonly serviceAccount: string;
  readonly tls: VaultTlsConfig;
}

/** The identity a Mount's configuration logs in as. */
export function identityOf(config: VaultMountConfig): VaultIdentity {
  return {
    vaultAddress: config.vaultAddress,
    vaultNamespace: config.vaultNamespace,
    vaultAuthMountPath: config.vaultAuthMountPath,
    roleName: config.roleName,
    audience: config.audience,
    serviceAccount: `${config.pod.namespace}/${config.pod.serviceAccountName}`,
    tls: config.tls,
  };
}

/** A string equal for two identities exactly when all their fields are equal (sorted JSON, undefined as null). */
export function identityKey(identity: VaultIdentity): string {
  return stableJson({
    ...identity,
    vaultNamespace: identity.vaultNamespace ?? null,
    tls: Object.fromEntries(Object.entries(identity.tls).map(([k, v]) => [k, v ?? null])),
  });
}
