// X.509 v3 certificates built as DER (RFC 5280), because node:crypto can read
// certificates but not make them. Generic: the caller chooses names, validity and
// extensions; this module encodes them, picks the signature algorithm from the signing
// key, and signs the TBSCertificate with crypto.sign.
import { createHash, createPublicKey, sign, type KeyObject } from 'node:crypto';
import {
  encodeBitString,
  encodeBoolean,
  encodeInteger,
  encodeNamedBits,
  encodeOctetString,
  encodeSequence,
  encodeTime,
  encodeTlv,
  encodeUtf8String,
  readOne,
  sequence,
  unsignedValue,
} from './der.js';
import { encodeOid } from './ec-key.js';
import { TlsInputError } from './tls-input-error.js';

/** Extension OIDs (RFC 5280 4.2.1). */
const OID = Object.freeze({
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
});

/** Extended key usage purposes (RFC 5280 4.2.1.12). */
export const EKU = Object.freeze({ serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' });

/** KeyUsage bit numbers (RFC 5280 4.2.1.3). */
export const KEY_USAGE = Object.freeze({ digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 });

/** One subjectAltName entry. */
export type GeneralName =
  | { readonly kind: 'dns'; readonly value: string }
  | { readonly kind: 'ip'; readonly value: Buffer }
  | { readonly kind: 'uri'; readonly value: string };

/** What goes into a certificate besides its signature. */
export interface CertificateTemplate {
  /** 1–20 octets, unsigned, first octet non-zero and < 0x80 (a positive, minimally encoded INTEGER). */
  readonly serial: Buffer;
  /** The issuer's subject Name DER, verbatim (for a self-signed certificate, `subject`). */
  readonly issuer: Buffer;
  /** The subject Name DER (encodeCommonName). */
  readonly subject: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The subject's key (public, or a private key whose public half is used). */
  readonly publicKey: KeyObject;
  /** Encoded Extension values (the helpers below). */
  readonly extensions: readonly Buffer[];
}

/** A Name with one RDN: CN=`commonName` as UTF8String. */
export function encodeCommonName(commonName: string): Buffer {
  const atv = encodeSequence([encodeOid(OID.commonName), encodeUtf8String(commonName)]);
  return encodeSequence([encodeTlv(0x31, atv)]);
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return encodeSequence([encodeOid(oid), ...(critical ? [encodeBoolean(true)] : []), encodeOctetString(value)]);
}

/** basicConstraints (critical): CA or not, with an optional path length for a CA. */
export function basicConstraints(ca: boolean, pathLength?: number): Buffer {
  const fields = ca
    ? [encodeBoolean(true), ...(pathLength === undefined ? [] : [encodeInteger(BigInt(pathLength))])]
    : [];
  return extension(OID.basicConstraints, true, encodeSequence(fields));
}

/** keyUsage (critical) with the given KEY_USAGE bits. */
export function keyUsage(bits: readonly number[]): Buffer {
  return extension(OID.keyUsage, true, encodeNamedBits(bits));
}

/** extKeyUsage (not critical) with the given EKU purposes. */
export function extKeyUsage(purposes: readonly string[]): Buffer {
  return extension(OID.extKeyUsage, false, encodeSequence(purposes.map(encodeOid)));
}

/** subjectAltName: dNSName [2], iPAddress [7] (4 or 16 octets), uniformResourceIdentifier [6]; critical when the subject is empty. */
export function subjectAltName(names: readonly GeneralName[], critical = false): Buffer {
  const encoded = names.map((n) => {
    if (n.kind === 'dns') return encodeTlv(0x82, Buffer.from(n.value, 'latin1'));
    if (n.kind === 'uri') return encodeTlv(0x86, Buffer.from(n.value, 'latin1'));
    if (n.value.length !== 4 && n.value.length !== 16) throw new RangeError('an IP address is 4 or 16 octets');
    return encodeTlv(0x87, n.value);
  });
  return extension(OID.subjectAltName, critical, encodeSequence(encoded));
}

/** subjectKeyIdentifier (not critical). */
export function subjectKeyIdentifier(id: Buffer): Buffer {
  return extension(OID.subjectKeyIdentifier, false, encodeOctetString(id));
}

/** authorityKeyIdentifier (not critical) carrying the issuer's key identifier as [0]. */
export function authorityKeyIdentifier(id: Buffer): Buffer {
  return extension(OID.authorityKeyIdentifier, false, encodeSequence([encodeTlv(0x80, id)]));
}

/**
 * The key identifier of `publicKey` as RFC 5280 4.2.1.2 method (1): SHA-1 of the
 * subjectPublicKey BIT STRING's value (without tag, length and unused-bits octet).
 */
export function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = spkiDer(publicKey);
  const [, bits] = sequence(readOne(spki, 'SubjectPublicKeyInfo'), 'SubjectPublicKeyInfo');
  if (bits === undefined || bits.tag !== 3 || bits.content.length < 1)
    throw new TlsInputError('SubjectPublicKeyInfo: expected BIT STRING');
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}

/** SubjectPublicKeyInfo DER of a key (a private key gives its public half). */
function spkiDer(key: KeyObject): Buffer {
  return (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' });
}

/** How a key signs a certificate: the AlgorithmIdentifier DER and crypto.sign's digest. */
export interface SignatureAlgorithm {
  readonly algorithm: Buffer;
  readonly digest: string | null;
  /** Human name for messages and docs, e.g. `ecdsa-with-SHA256`. */
  readonly name: string;
}

const NULL = encodeTlv(0x05, Buffer.alloc(0));

/**
 * The signature algorithm for a signing key: ECDSA-SHA256/384/512 for P-256/P-384/P-521,
 * sha256WithRSAEncryption for RSA, Ed25519 for Ed25519. Throws TlsInputError for other keys.
 */
export function signatureAlgorithmFor(key: KeyObject): SignatureAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return {
        algorithm: encodeSequence([encodeOid('1.2.840.113549.1.1.11'), NULL]),
        digest: 'sha256',
        name: 'sha256WithRSAEncryption',
      };
    case 'ed25519':
      return { algorithm: encodeSequence([encodeOid('1.3.101.112')]), digest: null, name: 'Ed25519' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1')
        return {
          algorithm: encodeSequence([encodeOid('1.2.840.10045.4.3.2')]),
          digest: 'sha256',
          name: 'ecdsa-with-SHA256',
        };
      if (curve === 'secp384r1')
        return {
          algorithm: encodeSequence([encodeOid('1.2.840.10045.4.3.3')]),
          digest: 'sha384',
          name: 'ecdsa-with-SHA384',
        };
      if (curve === 'secp521r1')
        return {
          algorithm: encodeSequence([encodeOid('1.2.840.10045.4.3.4')]),
          digest: 'sha512',
          name: 'ecdsa-with-SHA512',
        };
      throw new TlsInputError(
        `EC keys on curve ${curve ?? 'unknown'} cannot sign certificates here (P-256, P-384 and P-521 can)`,
      );
    }
    default:
      throw new TlsInputError(
        `${key.asymmetricKeyType ?? 'unknown'} keys cannot sign certificates here (RSA, ECDSA and Ed25519 can)`,
      );
  }
}

/** The DER of a v3 certificate for `template`, signed by `signer` (the issuer's private key). */
export function buildCertificate(template: CertificateTemplate, signer: KeyObject): Buffer {
  const first = template.serial[0];
  if (
    template.serial.length < 1 ||
    template.serial.length > 20 ||
    first === undefined ||
    first === 0 ||
    first >= 0x80
  ) {
    throw new RangeError('serial must be 1–20 octets, positive and minimally encoded');
  }
  const alg = signatureAlgorithmFor(signer);
  const tbs = encodeSequence([
    encodeTlv(0xa0, encodeInteger(2n)),
    encodeInteger(unsignedValue(template.serial)),
    alg.algorithm,
    template.issuer,
    encodeSequence([encodeTime(template.notBefore), encodeTime(template.notAfter)]),
    template.subject,
    spkiDer(template.publicKey),
    ...(template.extensions.length > 0 ? [encodeTlv(0xa3, encodeSequence([...template.extensions]))] : []),
  ]);
  const signature = sign(alg.digest, tbs, signer);
  return encodeSequence([tbs, alg.algorithm, encodeBitString(signature)]);
}
