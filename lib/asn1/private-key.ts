import { encodeInteger, encodeSequence, encodeTlv, isUniversal, octets, oid, readTlv, sequence, TAG } from './der.js';
import { encodeOid, encodeSec1, parseSec1, type EcKey } from './ec-key.js';
import type { PemBlock } from './pem.js';
import { encodePkcs1, parsePkcs1, type RsaKey } from './rsa-key.js';
import { TlsInputError } from './tls-input-error.js';

// Which private key encodings upstream understands and what it writes for them
// (pkg/util/secretutil getPrivateKey): whatever the PEM label says, the bytes are tried
// as PKCS#1, then PKCS#8, then SEC1; RSA is written as PKCS#1 "RSA PRIVATE KEY", ECDSA
// as SEC1 "EC PRIVATE KEY". Other key types are refused (upstream refuses the ones Go
// parses and writes an empty "PRIVATE KEY" block for the rest; we refuse them all).

const OID_RSA = '1.2.840.113549.1.1.1';
const OID_EC = '1.2.840.10045.2.1';
const OID_ED25519 = '1.3.101.112';
const OID_X25519 = '1.3.101.110';
const OTHER_KEY_TYPES: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.1.1.10', 'RSA-PSS'],
  ['1.3.101.113', 'Ed448'],
  ['1.3.101.111', 'X448'],
  ['1.2.840.10040.4.1', 'DSA'],
]);

/** A key upstream can write: RSA or ECDSA. */
export type UpstreamKey = { readonly kind: 'rsa'; readonly key: RsaKey } | { readonly kind: 'ec'; readonly key: EcKey };

function unsupported(type: string): TlsInputError {
  return new TlsInputError(
    `${type} private keys are not supported: only RSA and ECDSA keys can be written to tls.key, as upstream`,
  );
}

/**
 * Parses DER as PKCS#8 PrivateKeyInfo (Go's ParsePKCS8PrivateKey): RSA and ECDSA keys
 * are returned; Ed25519 and X25519 (which Go parses, then upstream refuses) and other
 * algorithms throw. Throws TlsInputError when the bytes are not PKCS#8.
 */
export function parsePkcs8(der: Buffer): UpstreamKey {
  // Go reads version, algorithm and key, ignoring anything after them.
  const fields = sequence(readTlv(der, 0, 'PKCS#8 private key').tlv, 'PKCS#8 private key');
  if (!isUniversal(fields[0], TAG.INTEGER)) throw new TlsInputError('PKCS#8 private key: expected INTEGER');
  const algorithm = sequence(fields[1], 'PKCS#8 algorithm');
  const algorithmOid = oid(algorithm[0], 'PKCS#8 algorithm');
  const inner = octets(fields[2], 'PKCS#8 private key');
  switch (algorithmOid) {
    case OID_RSA:
      return { kind: 'rsa', key: parsePkcs1(inner) };
    case OID_EC: {
      // The curve named in the parameters, when they are an OID (else the one inside).
      let curve: string | undefined;
      try {
        curve = algorithm[1] ? oid(algorithm[1], 'PKCS#8 EC parameters') : undefined;
      } catch {
        curve = undefined;
      }
      return { kind: 'ec', key: parseSec1(inner, curve) };
    }
    case OID_ED25519:
      throw unsupported('Ed25519');
    case OID_X25519:
      throw unsupported('X25519');
    default:
      throw unsupported(OTHER_KEY_TYPES.get(algorithmOid) ?? `algorithm ${algorithmOid}`);
  }
}

/**
 * Reads a private key from DER in any encoding upstream accepts (PKCS#1, PKCS#8, SEC1),
 * in upstream's order. Throws TlsInputError naming the most telling problem.
 */
export function parsePrivateKey(der: Buffer): UpstreamKey {
  const problems: TlsInputError[] = [];
  const attempts: (() => UpstreamKey)[] = [
    () => ({ kind: 'rsa', key: parsePkcs1(der) }),
    () => parsePkcs8(der),
    () => ({ kind: 'ec', key: parseSec1(der) }),
  ];
  for (const attempt of attempts) {
    try {
      return attempt();
    } catch (err) {
      if (!(err instanceof TlsInputError)) throw err;
      problems.push(err);
    }
  }
  // A key we recognised but cannot use says more than "not PKCS#1" (structural
  // problems are prefixed with the encoding: "PKCS#1 …", "PKCS#8 …", "SEC1 …").
  const telling = problems.find((p) => /^(RSA|EC) private key: |not supported/.test(p.message));
  throw telling ?? new TlsInputError('not a private key in PKCS#1, PKCS#8 or SEC1 form');
}

/** The PEM block upstream writes to tls.key for `key`. */
export function upstreamKeyBlock(key: UpstreamKey): PemBlock {
  return key.kind === 'rsa'
    ? { type: 'RSA PRIVATE KEY', headers: new Map(), bytes: encodePkcs1(key.key) }
    : { type: 'EC PRIVATE KEY', headers: new Map(), bytes: encodeSec1(key.key) };
}

/**
 * PKCS#8 PrivateKeyInfo DER of `key` as Go's x509.MarshalPKCS8PrivateKey writes it:
 * RSA with NULL parameters around PKCS#1; EC with the named curve in the algorithm and
 * SEC1 without it inside (what Azure's provider writes for a certificate's key).
 */
export function encodePkcs8(key: UpstreamKey): Buffer {
  const [algorithm, inner] =
    key.kind === 'rsa'
      ? [encodeSequence([encodeOid(OID_RSA), encodeTlv(0x05, Buffer.alloc(0))]), encodePkcs1(key.key)]
      : [encodeSequence([encodeOid(OID_EC), encodeOid(key.key.curveOid)]), encodeSec1(key.key, false)];
  return encodeSequence([encodeInteger(0n), algorithm, encodeTlv(0x04, inner)]);
}
