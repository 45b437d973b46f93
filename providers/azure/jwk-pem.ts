// A Key Vault key written as Azure's provider v1.8.2 writes it (provider.go getKey):
// the public half of the JWK as a "PUBLIC KEY" PEM block, the DER being Go's
// x509.MarshalPKIXPublicKey of an rsa.PublicKey (RSA, RSA-HSM) or ecdsa.PublicKey
// (EC, EC-HSM on P-256, P-384, P-521), PEM as Go's pem.EncodeToMemory.
//
// node:crypto does the encoding: it imports the JWK and exports it as SPKI, and writes
// the bytes Go writes, checked against the hand-built DER encoder this replaced
// (test/support/jwk-spki-fixtures.ts): a leading zero of n or e dropped (big.Int), a
// coordinate padded or with extra leading zeros (elliptic.Marshal's fixed size), an
// absent n, e or x read as zero (big.Int SetBytes of nothing). The PEM is lib/asn1/pem.ts's
// (Go's pem.EncodeToMemory). What node:crypto does not do as Go does stays here: the
// key-type and curve table, and the exponent bound.
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { encodePem } from '../../lib/asn1/pem.js';

/** The JWK fields read (the SDK's JsonWebKey: byte arrays already base64url-decoded). */
export interface PublicJwk {
  readonly kty?: string | undefined;
  readonly n?: Uint8Array | undefined;
  readonly e?: Uint8Array | undefined;
  readonly crv?: string | undefined;
  readonly x?: Uint8Array | undefined;
  readonly y?: Uint8Array | undefined;
}

/** upstream getCurve: the JWK curve names azkeys knows and Go's elliptic implements. */
const CURVES: ReadonlySet<string> = new Set(['P-256', 'P-384', 'P-521']);

function unsupported(what: string, why: string): SscError {
  return new SscError('failed-precondition', `azure provider: ${what}: ${why}`, { reason: 'UnsupportedKeyType' });
}

/** base64url of a JWK field; an absent one is empty, which node:crypto reads as zero. */
function field(bytes: Uint8Array | undefined): string {
  return Buffer.from(bytes ?? []).toString('base64url');
}

/** Whether the unsigned big-endian `bytes` are at least 2^63. */
function atLeast2To63(bytes: Uint8Array | undefined): boolean {
  const b = Buffer.from(bytes ?? []);
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  const significant = b.length - i;
  return significant > 8 || (significant === 8 && (b[i] as number) >= 0x80);
}

function rsaJwk(jwk: PublicJwk, what: string): JsonWebKey {
  // Go takes int(e.Int64()), which wraps past 2^63 into nonsense; node:crypto would
  // write the exponent as given. Such an exponent is refused instead.
  if (atLeast2To63(jwk.e)) throw unsupported(what, 'the RSA public exponent is larger than 2^63');
  return { kty: 'RSA', n: field(jwk.n), e: field(jwk.e) };
}

function ecJwk(jwk: PublicJwk, what: string): JsonWebKey {
  const crv = jwk.crv ?? '';
  if (!CURVES.has(crv))
    throw unsupported(what, `curve ${quoted(crv, 16)} is not supported (P-256, P-384 and P-521 are)`);
  return { kty: 'EC', crv, x: field(jwk.x), y: field(jwk.y) };
}

/**
 * The "PUBLIC KEY" PEM of a Key Vault key's JWK, byte for byte as upstream writes it.
 * Throws FAILED_PRECONDITION (`UnsupportedKeyType`) naming `what` for key types
 * upstream refuses (oct, oct-HSM, P-256K, …).
 */
export function jwkToPublicKeyPem(jwk: PublicJwk, what: string): Buffer {
  let key: JsonWebKey;
  switch (jwk.kty) {
    case 'RSA':
    case 'RSA-HSM':
      key = rsaJwk(jwk, what);
      break;
    case 'EC':
    case 'EC-HSM':
      key = ecJwk(jwk, what);
      break;
    default:
      throw unsupported(
        what,
        `key type ${quoted(jwk.kty ?? '', 16)} is not supported (RSA, RSA-HSM, EC and EC-HSM are)`,
      );
  }
  let der: Buffer;
  try {
    der = createPublicKey({ key, format: 'jwk' }).export({ type: 'spki', format: 'der' });
  } catch (err) {
    // Go's MarshalPKIXPublicKey refuses a point off the curve; OpenSSL checks the same
    // (and refuses a coordinate longer than the curve's size that is not zero-padded).
    if (key.kty === 'EC') throw unsupported(what, `the key's point is not on ${key.crv as string}`);
    throw unsupported(what, `the RSA key cannot be encoded (${(err as Error).message})`);
  }
  return encodePem({ type: 'PUBLIC KEY', headers: new Map(), bytes: der }) as Buffer;
}
