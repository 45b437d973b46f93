import { createECDH } from 'node:crypto';
import {
  encodeInteger,
  encodeSequence,
  encodeTlv,
  expectUniversal,
  isContext,
  octets,
  oid,
  readTlv,
  sequence,
  smallInteger,
  TAG,
  type Tlv,
} from './der.js';
import { TlsInputError } from './tls-input-error.js';

// An EC private key as upstream accepts and writes it: Go's x509.ParseECPrivateKey
// (SEC1, the NIST curves Go knows) and x509.MarshalECPrivateKey, which always writes
// the named curve and the uncompressed public point derived from the private scalar.

/** The curves Go's x509 package knows, by OID: Node's name and the scalar size in bytes. */
const CURVES: ReadonlyMap<string, { readonly node: string; readonly size: number }> = new Map([
  ['1.3.132.0.33', { node: 'secp224r1', size: 28 }],
  ['1.2.840.10045.3.1.7', { node: 'prime256v1', size: 32 }],
  ['1.3.132.0.34', { node: 'secp384r1', size: 48 }],
  ['1.3.132.0.35', { node: 'secp521r1', size: 66 }],
]);

/** An EC private key: its curve's OID and the private scalar padded to the curve's size. */
export interface EcKey {
  readonly curveOid: string;
  readonly scalar: Buffer;
}

/**
 * Parses DER as a SEC1 ECPrivateKey. `curveOid` is the curve named outside it (PKCS#8's
 * algorithm parameters), which wins over the one inside, as in Go. Throws TlsInputError
 * where Go's parser fails: not that structure, version ≠ 1, a curve Go does not know, a
 * scalar that is too long, zero or not below the curve's order.
 */
export function parseSec1(der: Buffer, curveOid?: string): EcKey {
  // Go ignores bytes after the structure here (asn1.Unmarshal's rest is dropped).
  const fields = sequence(readTlv(der, 0, 'SEC1 EC private key').tlv, 'SEC1 EC private key');
  if (smallInteger(fields[0], 'SEC1 EC private key version') !== 1)
    throw new TlsInputError('SEC1 EC private key: unknown version');
  let raw = octets(fields[1], 'SEC1 EC private key');
  const tagged = fields.slice(2, 4).filter((f) => f.constructed);
  const params = tagged.find((f) => isContext(f, 0));
  const innerOid = params
    ? oid(readTlv(params.content, 0, 'SEC1 EC private key parameters').tlv, 'SEC1 EC private key parameters')
    : undefined;
  const publicKey = tagged.find((f) => isContext(f, 1));
  // Go parses the public key (and then ignores it): a malformed BIT STRING fails.
  if (publicKey) checkBitString(readTlv(publicKey.content, 0, 'SEC1 EC public key').tlv);
  const named = curveOid ?? innerOid;
  const curve = named === undefined ? undefined : CURVES.get(named);
  if (!curve)
    throw new TlsInputError(
      `EC private key: unknown elliptic curve${named === undefined ? '' : ` ${named}`} (upstream knows P-224, P-256, P-384 and P-521)`,
    );
  while (raw.length > curve.size) {
    if (raw[0] !== 0) throw new TlsInputError('EC private key: invalid private key length');
    raw = raw.subarray(1);
  }
  const scalar = Buffer.concat([Buffer.alloc(curve.size - raw.length), raw]);
  try {
    createECDH(curve.node).setPrivateKey(scalar);
  } catch {
    throw new TlsInputError('EC private key: invalid private key value');
  }
  return { curveOid: named as string, scalar };
}

function checkBitString(tlv: Tlv): void {
  const c = expectUniversal(tlv, TAG.BIT_STRING, 'SEC1 EC public key').content;
  const padding = c[0];
  if (
    padding === undefined ||
    padding > 7 ||
    (c.length === 1 && padding > 0) ||
    ((c[c.length - 1] as number) & ((1 << padding) - 1)) !== 0
  ) {
    throw new TlsInputError('EC private key: invalid public key BIT STRING');
  }
}

/** An OBJECT IDENTIFIER's DER from its dotted form. */
export function encodeOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const values = [(arcs[0] as number) * 40 + (arcs[1] as number), ...arcs.slice(2)];
  const bytes: number[] = [];
  for (const value of values) {
    const groups: number[] = [];
    for (let v = value; ; v = Math.floor(v / 128)) {
      groups.unshift(v & 0x7f);
      if (v < 128) break;
    }
    bytes.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)));
  }
  return encodeTlv(0x06, Buffer.from(bytes));
}

/**
 * SEC1 DER of `key` as Go's MarshalECPrivateKey writes it; without the curve
 * (`namedCurve` false) as Go's MarshalPKCS8PrivateKey nests it (marshalECPrivateKeyWithOID(k, nil)).
 */
export function encodeSec1(key: EcKey, namedCurve = true): Buffer {
  const curve = CURVES.get(key.curveOid);
  if (!curve) throw new TlsInputError('EC private key: unknown elliptic curve');
  const ecdh = createECDH(curve.node);
  ecdh.setPrivateKey(key.scalar);
  const point = ecdh.getPublicKey(null, 'uncompressed');
  return encodeSequence([
    encodeInteger(1n),
    encodeTlv(0x04, key.scalar),
    ...(namedCurve ? [encodeTlv(0xa0, encodeOid(key.curveOid))] : []),
    encodeTlv(0xa1, encodeTlv(0x03, Buffer.concat([Buffer.from([0]), point]))),
  ]);
}
