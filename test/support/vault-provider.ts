// The real vault provider process (`secrets-store-csi provider vault`) for integration
// tests, a v1alpha1 client calling its Mount as the driver does, and JWT auth on a real
// OpenBao whose tokens the test signs itself: a stand-in for the service-account tokens
// kubelet mints (Kubernetes auth against a real kube-apiserver has its own test).
import { join } from 'node:path';
import { startProviderProcess, type ProviderProcess } from './provider-process.js';
import type { OpenBaoAdmin } from './openbao.js';
import { ServiceAccountTokenIssuer, tokensAttribute } from './service-account-tokens.js';

export { parseMetrics, podAttributes, type MountFailure, type MountOptions } from './provider-process.js';

/** A running vault provider and a client to it. */
export type VaultProviderProcess = ProviderProcess;

/** Starts `secrets-store-csi provider vault <args>` (with an HMAC key file in its temp dir); see startProviderProcess. */
export function startVaultProvider(
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
  options: { providersDir?: string } = {},
): Promise<VaultProviderProcess> {
  return startProviderProcess('vault', args, env, {
    ...options,
    extraArgs: (work) => [`--hmac-key-file=${join(work, 'hmac.key')}`],
  });
}

/** JWT auth on an OpenBao: tokens are signed here, as kubelet would sign service-account tokens. */
export interface JwtAuth {
  /** The auth mount path (`jwt`). */
  readonly mount: string;
  /** A token for service account `namespace/name` and `audience` (default `vault`), valid for 10 minutes. */
  token(serviceAccount?: string, audience?: string): string;
  /** The driver's `csi.storage.k8s.io/serviceAccount.tokens` attribute holding `token` for `audience`. */
  tokensAttribute(token: string, audience?: string): string;
}

/** Enables JWT auth at `mount` with a fresh RSA key, and a role `role` bound to audience `vault` with `policies`. */
export async function enableJwtAuth(
  bao: OpenBaoAdmin,
  mount: string,
  roles: Record<string, readonly string[]>,
): Promise<JwtAuth> {
  const issuer = new ServiceAccountTokenIssuer();
  await bao.enableAuth(mount, 'jwt');
  await bao.write(`auth/${mount}/config`, {
    jwt_validation_pubkeys: [issuer.publicKeyPem],
    bound_issuer: issuer.issuer,
  });
  for (const [role, policies] of Object.entries(roles)) {
    await bao.write(`auth/${mount}/role/${role}`, {
      role_type: 'jwt',
      bound_audiences: ['vault'],
      user_claim: 'sub',
      policies,
      token_ttl: '10m',
    });
  }
  return {
    mount,
    token: (serviceAccount = 'default/app', audience = 'vault') => issuer.token(serviceAccount, audience),
    tokensAttribute: (token, audience = 'vault') => tokensAttribute(token, audience),
  };
}
