// Stand-in for Azure Key Vault's bearer-token check (test only; no real Key Vault can run
// here, see docs/conformance.md). Every unauthenticated or badly authenticated request gets
// 401 with the challenge `Bearer authorization="https://<login host>/<tenant>",
// resource="<Key Vault resource>"` that the SDKs' challenge policy follows. AKV10000 (no
// token), AKV10022 (audience), AKV10032 (issuer) and AKV10046 (signature key) are the real
// service's codes; the expired/malformed wordings are unverified.
import type { StandInCloud } from './clouds.js';
import { type KeyVaultErrorReply, unauthorized } from './keyvault-errors.js';
import type { TokenAuthority } from './token-authority.js';
import type { Principal } from './vault-store.js';

/** The caller Key Vault names in 403 messages, and its principal. */
export interface AuthorizedCaller {
  readonly principal: Principal;
  /** `appid=…;oid=…;iss=…` as in Key Vault's AccessDenied messages. */
  readonly description: string;
}

/** The `WWW-Authenticate` challenge for a vault in `tenantId`. */
export function keyVaultChallenge(cloud: StandInCloud, tenantId: string): string {
  return `Bearer authorization="https://${cloud.loginHost}/${tenantId}", resource="${cloud.keyVaultResource}"`;
}

/** Checks the Authorization header of a Key Vault request for a vault of `tenantId` in `cloud`. */
export function authorizeKeyVault(
  header: string | undefined,
  authority: TokenAuthority,
  cloud: StandInCloud,
  tenantId: string,
): AuthorizedCaller | KeyVaultErrorReply {
  const challenge = keyVaultChallenge(cloud, tenantId);
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (match === null) return unauthorized('AKV10000: Request is missing a Bearer or PoP token.', challenge);
  const verified = authority.verify(match[1] as string);
  if (verified === 'malformed') return unauthorized('AKV10001: The token is malformed.', challenge);
  if (verified === 'signature')
    return unauthorized('AKV10046: Unable to resolve the key used for signature validation.', challenge);
  if (verified === 'expired') return unauthorized('AKV10023: Token expired.', challenge);
  if (verified === 'not-yet-valid') return unauthorized('AKV10024: Token not yet valid.', challenge);
  const { claims } = verified;
  const aud = String(claims['aud']);
  if (aud !== cloud.keyVaultResource && aud !== `${cloud.keyVaultResource}/`) {
    return unauthorized(`AKV10022: Invalid audience. Expected ${cloud.keyVaultResource}, found: ${aud}.`, challenge);
  }
  const expectedIss = `${cloud.stsPrefix}${tenantId}/`;
  const iss = String(claims['iss']);
  if (iss !== expectedIss || claims['tid'] !== tenantId) {
    return unauthorized(`AKV10032: Invalid issuer. Expected one of ${expectedIss}, found ${iss}.`, challenge);
  }
  const principal = { clientId: String(claims['appid']), objectId: String(claims['oid']) };
  return { principal, description: `appid=${principal.clientId};oid=${principal.objectId};iss=${iss}` };
}
