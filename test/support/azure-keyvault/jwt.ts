// Stand-in for Microsoft Entra ID's token format (test only): no real Entra or Key Vault can
// run here (docs/conformance.md), so the stand-in signs its own access tokens and verifies the
// client assertions it receives. Compact JWS per RFC 7515/7519 with node:crypto: RS256 (what
// Entra signs with) and ES256 (what some workload identity issuers use).
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** A JWT's decoded parts, before or after verification. */
export interface DecodedJwt {
  readonly header: Record<string, unknown>;
  readonly claims: Record<string, unknown>;
  readonly signingInput: string;
  readonly signature: Buffer;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function algorithmFor(key: KeyObject): 'RS256' | 'ES256' {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new Error(`jwt: unsupported signing key type ${String(key.asymmetricKeyType)}`);
}

/** Signs `claims` with `key` (RSA → RS256, P-256 → ES256); `kid` goes into the header. */
export function signJwt(claims: Record<string, unknown>, key: KeyObject, kid: string | undefined): string {
  const alg = algorithmFor(key);
  const header = { typ: 'JWT', alg, ...(kid === undefined ? {} : { kid }) };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(input), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${b64url(signature)}`;
}

/** Splits and parses a compact JWT; undefined when it is not one. */
export function decodeJwt(token: string): DecodedJwt | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0] as string, 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as unknown;
    if (typeof header !== 'object' || header === null || typeof claims !== 'object' || claims === null)
      return undefined;
    return {
      header: header as Record<string, unknown>,
      claims: claims as Record<string, unknown>,
      signingInput: `${parts[0]}.${parts[1]}`,
      signature: Buffer.from(parts[2] as string, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** Whether `jwt`'s signature verifies with `key` under the algorithm its header names. */
export function verifyJwtSignature(jwt: DecodedJwt, key: KeyObject): boolean {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const alg = jwt.header['alg'];
  try {
    if (alg === 'RS256' && pub.asymmetricKeyType === 'rsa')
      return verify('sha256', Buffer.from(jwt.signingInput), pub, jwt.signature);
    if (alg === 'ES256' && pub.asymmetricKeyType === 'ec') {
      return verify('sha256', Buffer.from(jwt.signingInput), { key: pub, dsaEncoding: 'ieee-p1363' }, jwt.signature);
    }
  } catch {
    return false;
  }
  return false;
}

/** A numeric claim (seconds), or undefined. */
export function numericClaim(claims: Record<string, unknown>, name: string): number | undefined {
  const v = claims[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
