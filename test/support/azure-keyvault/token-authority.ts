// Stand-in for Microsoft Entra ID's access-token signing (test only; no real Entra can run
// here, see docs/conformance.md). Entra issues v1.0 access tokens for Key Vault (`aud` =
// the Key Vault resource, `iss` = `https://sts.windows.net/<tenant>/`, `tid`, `oid`, `appid`,
// `iat`/`nbf`/`exp`) signed RS256; the stand-in's Key Vault side verifies them with the same
// authority's public key, so a token from another stand-in instance (or a forged one) fails.
import { createPublicKey, generateKeyPair, type KeyObject, randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { StandInCloud } from './clouds.js';
import { type StandInClock, unixSeconds } from './clock.js';
import { decodeJwt, numericClaim, signJwt, verifyJwtSignature } from './jwt.js';

const generate = promisify(generateKeyPair);
let sharedKey: Promise<KeyObject> | undefined;

/** Lifetime of issued access tokens. CAE-capable clients get long-lived tokens from Entra. */
export const ACCESS_TOKEN_SECONDS = 86_399;

/** Who a token was issued to. */
export interface TokenSubject {
  readonly tenantId: string;
  readonly clientId: string;
  readonly objectId: string;
  /** `appidacr`: 1 for a client secret, 2 for a certificate or client assertion, 0 for managed identity. */
  readonly authMethod: '0' | '1' | '2';
}

/** Claims of a verified access token. */
export interface VerifiedToken {
  readonly claims: Record<string, unknown>;
}

/** Why a bearer token was refused. */
export type TokenProblem = 'malformed' | 'signature' | 'expired' | 'not-yet-valid';

/** Signs and verifies the stand-in's access tokens. */
export class TokenAuthority {
  private constructor(
    private readonly key: KeyObject,
    readonly kid: string,
    private readonly clock: StandInClock,
  ) {}

  /**
   * A new authority. The RSA-2048 key is made once per process (key generation is most of a
   * stand-in's startup); each authority has its own `kid`, so a token from another stand-in
   * instance is still refused.
   */
  static async create(clock: StandInClock): Promise<TokenAuthority> {
    sharedKey ??= generate('rsa', { modulusLength: 2048 }).then((pair) => pair.privateKey);
    return new TokenAuthority(await sharedKey, randomBytes(20).toString('base64url'), clock);
  }

  /** An access token for `resource` (an audience such as `https://vault.azure.net`). */
  issue(
    subject: TokenSubject,
    resource: string,
    cloud: StandInCloud,
  ): { token: string; expiresIn: number; expiresOn: number; notBefore: number } {
    const now = unixSeconds(this.clock);
    const iss = `${cloud.stsPrefix}${subject.tenantId}/`;
    const claims = {
      aud: resource,
      iss,
      iat: now,
      nbf: now,
      exp: now + ACCESS_TOKEN_SECONDS,
      appid: subject.clientId,
      appidacr: subject.authMethod,
      idp: iss,
      oid: subject.objectId,
      sub: subject.objectId,
      tid: subject.tenantId,
      uti: randomUUID(),
      ver: '1.0',
    };
    return {
      token: signJwt(claims, this.key, this.kid),
      expiresIn: ACCESS_TOKEN_SECONDS,
      expiresOn: now + ACCESS_TOKEN_SECONDS,
      notBefore: now,
    };
  }

  /** The public signing key as a JWK (Entra's `discovery/v2.0/keys`). */
  publicJwk(): { n?: string; e?: string } {
    return createPublicKey(this.key).export({ format: 'jwk' });
  }

  /** Verifies signature and lifetime (5 minutes clock skew, as Entra-protected resources allow). */
  verify(token: string): VerifiedToken | TokenProblem {
    const jwt = decodeJwt(token);
    if (jwt === undefined) return 'malformed';
    if (jwt.header['kid'] !== this.kid || !verifyJwtSignature(jwt, this.key)) return 'signature';
    const now = unixSeconds(this.clock);
    const exp = numericClaim(jwt.claims, 'exp');
    const nbf = numericClaim(jwt.claims, 'nbf');
    if (exp === undefined || now > exp + 300) return 'expired';
    if (nbf !== undefined && now + 300 < nbf) return 'not-yet-valid';
    return { claims: jwt.claims };
  }
}
