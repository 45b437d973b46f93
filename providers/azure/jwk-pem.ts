// A Key Vault key written as Azure's provider v1.8.2 writes it (provider.go getKey):
// the public half of the JWK as a "PUBLIC KEY" PEM block, the DER being Go's
// x509.MarshalPKIXPublicKey of an rsa.PublicKey (RSA, RSA-HSM) or ecdsa.PublicKey
// (EC, EC-HSM on P-256, P-384, P-521), PEM as Go's pem.EncodeToMemory. Built from
// der.ts rather than through OpenSSL so the bytes follow Go's rules (a leading zero of
// n dropped by big.Int, the point padded by elliptic.Marshal) whatever OpenSSL allows.
import { createPublicKey } from 'node:crypto';
import { SscError } from '../../proto/runtime/errors.js';
import { quoted } from '../../proto/runtime/untrusted-text.js';
import { encodeInteger, encodeSequence, encodeTlv, unsignedValue } from '../../tls/der.js';
import { encodeOid } from '../../tls/ec-key.js';
import { encodePem } from '../../tls/pem.js';

/** The JWK fields read (the SDK's JsonWebKey: byte arrays already base64url-decoded). */
export interface PublicJwk {
  readonly kty?: string | undefined;
  readonly n?: Uint8Array | undefined;
  readonly e?: Uint8Array | undefined;
  readonly crv?: string | undefined;
  readonly x?: Uint8Array | undefined;
  readonly y?: Uint8Array | undefined;
}

const OID_RSA = '1.2.840.113549.1.1.1';
const OID_EC = '1.2.840.10045.2.1';
/** upstream getCurve: the JWK curve names azkeys knows and Go's elliptic implements. */
const CURVES: ReadonlyMap<string, { readonly oid: string; readonly size: number; readonly jwk: string }> = new Map([
  ['P-256', { oid: '1.2.840.10045.3.1.7', size: 32, jwk: 'P-256' }],
  ['P-384', { oid: '1.3.132.0.34', size: 48, jwk: 'P-384' }],
  ['P-521', { oid: '1.3.132.0.35', size: 66, jwk: 'P-521' }],
]);

function unsupported(what: string, why: string): SscError {
  return new SscError('failed-precondition', `azure provider: ${what}: ${why}`, { reason: 'UnsupportedKeyType' });
}

function spki(algorithm: Buffer, key: Buffer): Buffer {
  return encodeSequence([algorithm, encodeTlv(0x03, Buffer.concat([Buffer.from([0]), key]))]);
}

function rsaSpki(jwk: PublicJwk, what: string): Buffer {
  // big.Int SetBytes: leading zeros vanish. Go takes int(e.Int64()), which wraps past
  // 2^63 into nonsense; such an exponent is refused instead.
  const n = unsignedValue(Buffer.from(jwk.n ?? []));
  const e = unsignedValue(Buffer.from(jwk.e ?? []));
  if (e >= 1n << 63n) throw unsupported(what, 'the RSA public exponent is larger than 2^63');
  return spki(encodeSequence([encodeOid(OID_RSA), encodeTlv(0x05, Buffer.alloc(0))]), encodeSequence([encodeInteger(n), encodeInteger(e)]));
}

/** `bytes` as a fixed-size big-endian integer (elliptic.Marshal), or undefined when too long. */
function fixed(bytes: Uint8Array | undefined, size: number): Buffer | undefined {
  let b = Buffer.from(bytes ?? []);
  while (b.length > size && b[0] === 0) b = b.subarray(1);
  return b.length > size ? undefined : Buffer.concat([Buffer.alloc(size - b.length), b]);
}

function ecSpki(jwk: PublicJwk, what: string): Buffer {
  const curve = CURVES.get(jwk.crv ?? '');
  if (!curve) throw unsupported(what, `curve ${quoted(jwk.crv ?? '', 16)} is not supported (P-256, P-384 and P-521 are)`);
  const x = fixed(jwk.x, curve.size);
  const y = fixed(jwk.y, curve.size);
  // Go's MarshalPKIXPublicKey refuses a point off the curve; OpenSSL checks the same.
  let onCurve = x !== undefined && y !== undefined;
  if (onCurve) {
    try {
      createPublicKey({ key: { kty: 'EC', crv: curve.jwk, x: (x as Buffer).toString('base64url'), y: (y as Buffer).toString('base64url') }, format: 'jwk' });
    } catch {
      onCurve = false;
    }
  }
  if (!onCurve) throw unsupported(what, `the key's point is not on ${curve.jwk}`);
  return spki(encodeSequence([encodeOid(OID_EC), encodeOid(curve.oid)]), Buffer.concat([Buffer.from([4]), x as Buffer, y as Buffer]));
}

/**
 * The "PUBLIC KEY" PEM of a Key Vault key's JWK, byte for byte as upstream writes it.
 * Throws FAILED_PRECONDITION (`UnsupportedKeyType`) naming `what` for key types
 * upstream refuses (oct, oct-HSM, P-256K, …).
 */
export function jwkToPublicKeyPem(jwk: PublicJwk, what: string): Buffer {
  let der: Buffer;
  switch (jwk.kty) {
    case 'RSA': case 'RSA-HSM': der = rsaSpki(jwk, what); break;
    case 'EC': case 'EC-HSM': der = ecSpki(jwk, what); break;
    default: throw unsupported(what, `key type ${quoted(jwk.kty ?? '', 16)} is not supported (RSA, RSA-HSM, EC and EC-HSM are)`);
  }
  return encodePem({ type: 'PUBLIC KEY', headers: new Map(), bytes: der }) as Buffer;
}
