import { createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { isContext, octets, oid, readOne, sequence, smallInteger, TAG, type Tlv } from './der.js';
import type { PemBlock } from './pem.js';
import { parsePkcs8, upstreamKeyBlock } from './private-key.js';
import { rc2CbcDecrypt } from './rc2.js';
import { TlsInputError } from './tls-input-error.js';

// Password-less PKCS#12 (PFX) files, read as upstream reads them: Go's
// golang.org/x/crypto/pkcs12 ToPEM with the empty password. That reader takes a v3 PFX
// with a SHA-1 MAC, exactly two authenticated-safe entries (data or encryptedData),
// pbeWithSHAAnd3-KeyTripleDES-CBC or pbeWithSHAAnd40BitRC2-CBC encryption, and only
// certificate bags and shrouded (encrypted) key bags: what `openssl pkcs12 -export
// -legacy` and Azure Key Vault write. OpenSSL 3's default (PBES2/AES, SHA-256 MAC) and
// unencrypted key bags are refused by upstream, and so by us, with a message naming why.

const OID_DATA = '1.2.840.113549.1.7.1';
const OID_ENCRYPTED_DATA = '1.2.840.113549.1.7.6';
const OID_SHA1 = '1.3.14.3.2.26';
const OID_PBE_SHA1_3DES = '1.2.840.113549.1.12.1.3';
const OID_PBE_SHA1_RC2_40 = '1.2.840.113549.1.12.1.6';
const OID_CERT_BAG = '1.2.840.113549.1.12.10.1.3';
const OID_SHROUDED_KEY_BAG = '1.2.840.113549.1.12.10.1.2';
const OID_X509_CERT = '1.2.840.113549.1.9.22.1';
const ATTRIBUTES: ReadonlyMap<string, { readonly header: string; readonly bmp: boolean }> = new Map([
  ['1.2.840.113549.1.9.20', { header: 'friendlyName', bmp: true }],
  ['1.2.840.113549.1.9.21', { header: 'localKeyId', bmp: false }],
  ['1.3.6.1.4.1.311.17.1', { header: 'Microsoft CSP Name', bmp: true }], // OpenSSL's name for it
]);
const BAG_NAMES: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.1.12.10.1.1', 'unencrypted key bag (openssl -keypbe NONE)'],
  ['1.2.840.113549.1.12.10.1.4', 'CRL bag'],
  ['1.2.840.113549.1.12.10.1.5', 'secret bag'],
  ['1.2.840.113549.1.12.10.1.6', 'nested safe contents bag'],
]);
const ALGORITHM_NAMES: ReadonlyMap<string, string> = new Map([
  ['1.2.840.113549.1.5.13', 'PBES2 (OpenSSL 3 default; export with -legacy)'],
  ['2.16.840.1.101.3.4.2.1', 'SHA-256 (OpenSSL 3 default; export with -legacy)'],
]);
/** Most PBKDF iterations accepted: far above what tools write (2,048), low enough not to stall a sync. */
export const MAX_PKCS12_ITERATIONS = 1_000_000;

function refuse(message: string): TlsInputError {
  return new TlsInputError(`PKCS#12: ${message}`);
}

function named(oidValue: string, names: ReadonlyMap<string, string>): string {
  return names.get(oidValue) ?? oidValue;
}

/** RFC 7292 appendix B.2 with SHA-1 (u = 20, v = 64): `size` bytes for purpose `id`. */
export function pkcs12Kdf(id: 1 | 2 | 3, salt: Buffer, password: Buffer, iterations: number, size: number): Buffer {
  if (iterations > MAX_PKCS12_ITERATIONS) throw refuse(`${iterations} iterations (more than ${MAX_PKCS12_ITERATIONS})`);
  const v = 64;
  const fill = (b: Buffer) => (b.length === 0 ? Buffer.alloc(0) : Buffer.alloc(v * Math.ceil(b.length / v), b));
  const d = Buffer.alloc(v, id);
  const i = Buffer.concat([fill(salt), fill(password)]);
  const out: Buffer[] = [];
  for (let produced = 0; produced < size; produced += 20) {
    let a = createHash('sha1').update(d).update(i).digest();
    for (let j = 1; j < iterations; j++) a = createHash('sha1').update(a).digest();
    out.push(a);
    if (produced + 20 >= size) break;
    // I_j = (I_j + B + 1) mod 2^(8v), B = A repeated to v bytes.
    const b = BigInt(`0x${Buffer.alloc(v, a).toString('hex')}`);
    for (let at = 0; at < i.length; at += v) {
      const sum = (BigInt(`0x${i.subarray(at, at + v).toString('hex')}`) + b + 1n) & ((1n << BigInt(8 * v)) - 1n);
      Buffer.from(sum.toString(16).padStart(2 * v, '0'), 'hex').copy(i, at);
    }
  }
  return Buffer.concat(out).subarray(0, size);
}

function pbeDecrypt(algorithm: Tlv[], encrypted: Buffer, password: Buffer): Buffer {
  const algorithmOid = oid(algorithm[0], 'PKCS#12 encryption algorithm');
  if (algorithmOid !== OID_PBE_SHA1_3DES && algorithmOid !== OID_PBE_SHA1_RC2_40) {
    throw refuse(
      `encryption algorithm ${named(algorithmOid, ALGORITHM_NAMES)} is not supported (upstream reads 3DES and RC2-40 only)`,
    );
  }
  if (!algorithm[1]) throw refuse('encryption parameters missing');
  const params = sequence(readOne(algorithm[1].full, 'PKCS#12 encryption parameters'), 'PKCS#12 encryption parameters');
  const salt = octets(params[0], 'PKCS#12 salt');
  const iterations = smallInteger(params[1], 'PKCS#12 iterations');
  const iv = pkcs12Kdf(2, salt, password, iterations, 8);
  if (encrypted.length === 0) throw refuse('empty encrypted data');
  if (encrypted.length % 8 !== 0) throw refuse('encrypted data is not a multiple of the block size');
  const decrypted =
    algorithmOid === OID_PBE_SHA1_3DES
      ? (() => {
          const d = createDecipheriv('des-ede3-cbc', pkcs12Kdf(1, salt, password, iterations, 24), iv).setAutoPadding(
            false,
          );
          return Buffer.concat([d.update(encrypted), d.final()]);
        })()
      : rc2CbcDecrypt(pkcs12Kdf(1, salt, password, iterations, 5), 40, iv, encrypted);
  const pad = decrypted[decrypted.length - 1] as number;
  if (pad === 0 || pad > 8 || !decrypted.subarray(decrypted.length - pad).every((b) => b === pad))
    throw refuse('decryption error (is the file password-protected?)');
  return decrypted.subarray(0, decrypted.length - pad);
}

function verifyMac(macData: Tlv, message: Buffer): Buffer {
  const fields = sequence(macData, 'PKCS#12 MAC');
  const digestInfo = sequence(fields[0], 'PKCS#12 MAC');
  const algorithmOid = oid(sequence(digestInfo[0], 'PKCS#12 MAC algorithm')[0], 'PKCS#12 MAC algorithm');
  if (algorithmOid !== OID_SHA1)
    throw refuse(`MAC digest ${named(algorithmOid, ALGORITHM_NAMES)} is not supported (upstream reads SHA-1 only)`);
  const digest = octets(digestInfo[1], 'PKCS#12 MAC');
  const salt = octets(fields[1], 'PKCS#12 MAC salt');
  const iterations = fields[2] ? smallInteger(fields[2], 'PKCS#12 MAC iterations') : 1;
  // The empty password is the BMP string terminator (two zero bytes); some writers use no bytes at all.
  for (const password of [Buffer.alloc(2), Buffer.alloc(0)]) {
    const expected = createHmac('sha1', pkcs12Kdf(3, salt, password, iterations, 20))
      .update(message)
      .digest();
    if (digest.length === expected.length && timingSafeEqual(digest, expected)) return password;
  }
  throw refuse('the MAC does not verify with an empty password (is the file password-protected?)');
}

function bmpString(bytes: Buffer): string {
  if (bytes.length % 2 !== 0) throw refuse('odd-length BMP string');
  const body =
    bytes.length >= 2 && bytes[bytes.length - 1] === 0 && bytes[bytes.length - 2] === 0 ? bytes.subarray(0, -2) : bytes;
  // Node's UTF-8 encoder turns unpaired surrogates into U+FFFD, as Go's utf16.Decode does.
  return Buffer.from(Buffer.from(body).swap16().toString('utf16le'), 'utf8').toString('latin1');
}

function bagHeaders(attributes: Tlv | undefined): Map<string, string> {
  const headers = new Map<string, string>();
  if (!attributes) return headers;
  for (const attribute of sequence(attributes, 'PKCS#12 attributes', TAG.SET)) {
    const fields = sequence(attribute, 'PKCS#12 attribute');
    if (!fields[1]) throw refuse('attribute without a value');
    const known = ATTRIBUTES.get(oid(fields[0], 'PKCS#12 attribute'));
    if (!known) continue;
    const value = readOne(fields[1].content, 'PKCS#12 attribute value');
    headers.set(
      known.header,
      known.bmp ? bmpString(value.content) : octets(value, 'PKCS#12 localKeyId').toString('hex'),
    );
  }
  return headers;
}

function convertBag(bag: Tlv, password: Buffer): PemBlock {
  const fields = sequence(bag, 'PKCS#12 safe bag');
  const bagOid = oid(fields[0], 'PKCS#12 safe bag');
  const value = fields[1];
  if (!isContext(value, 0) || !value.constructed) throw refuse('safe bag without a value');
  const headers = bagHeaders(fields[2]);
  const inner = readOne(value.content, 'PKCS#12 safe bag value');
  if (bagOid === OID_CERT_BAG) {
    const certBag = sequence(inner, 'PKCS#12 certificate bag');
    if (oid(certBag[0], 'PKCS#12 certificate bag') !== OID_X509_CERT)
      throw refuse('only X.509 certificates are supported');
    const explicit = certBag[1];
    if (!isContext(explicit, 0)) throw refuse('certificate bag without a certificate');
    return {
      type: 'CERTIFICATE',
      headers,
      bytes: octets(readOne(explicit.content, 'PKCS#12 certificate'), 'PKCS#12 certificate'),
    };
  }
  if (bagOid === OID_SHROUDED_KEY_BAG) {
    const info = sequence(inner, 'PKCS#12 shrouded key bag');
    const pkcs8 = pbeDecrypt(
      sequence(info[0], 'PKCS#12 key encryption algorithm'),
      octets(info[1], 'PKCS#12 shrouded key bag'),
      password,
    );
    readOne(pkcs8, 'PKCS#12 decrypted key');
    return { ...upstreamKeyBlock(parsePkcs8(pkcs8)), type: 'PRIVATE KEY', headers };
  }
  throw refuse(`${named(bagOid, BAG_NAMES)} is not supported (upstream reads certificate and shrouded key bags only)`);
}

function safeContents(contentInfo: Tlv, password: Buffer): Tlv[] {
  const fields = sequence(contentInfo, 'PKCS#12 content');
  const type = oid(fields[0], 'PKCS#12 content type');
  const content = fields[1];
  if (!isContext(content, 0)) throw refuse('content missing');
  let data: Buffer;
  if (type === OID_DATA) {
    data = octets(readOne(content.content, 'PKCS#12 data'), 'PKCS#12 data');
  } else if (type === OID_ENCRYPTED_DATA) {
    const encryptedData = sequence(readOne(content.content, 'PKCS#12 encrypted data'), 'PKCS#12 encrypted data');
    if (smallInteger(encryptedData[0], 'PKCS#12 encrypted data version') !== 0)
      throw refuse('only version 0 of EncryptedData is supported');
    const info = sequence(encryptedData[1], 'PKCS#12 encrypted content');
    const encrypted = isContext(info[2], 0) && !info[2].constructed ? info[2].content : Buffer.alloc(0);
    data = pbeDecrypt(sequence(info[1], 'PKCS#12 encryption algorithm'), encrypted, password);
  } else {
    throw refuse('only data and encryptedData are supported in the authenticated safe');
  }
  return sequence(readOne(data, 'PKCS#12 safe contents'), 'PKCS#12 safe contents');
}

/**
 * The PEM blocks upstream gets from a password-less PKCS#12 file, in the file's bag
 * order: CERTIFICATE (with `friendlyName`/`localKeyId` headers from the bag's
 * attributes, which upstream keeps in tls.crt) and PRIVATE KEY (RSA keys as PKCS#1,
 * EC keys as SEC1). Throws TlsInputError where upstream's reader fails.
 */
export function pkcs12ToPem(pfx: Buffer): PemBlock[] {
  const fields = sequence(readOne(pfx, 'PKCS#12'), 'PKCS#12');
  if (smallInteger(fields[0], 'PKCS#12 version') !== 3) throw refuse('can only decode v3 PFX');
  const authSafe = sequence(fields[1], 'PKCS#12 authenticated safe');
  if (oid(authSafe[0], 'PKCS#12 authenticated safe') !== OID_DATA)
    throw refuse('only password-protected PFX is implemented');
  if (!isContext(authSafe[1], 0)) throw refuse('authenticated safe without content');
  const message = readOne(authSafe[1].content, 'PKCS#12 authenticated safe').content;
  if (!fields[2]) throw refuse('no MAC in data');
  const password = verifyMac(fields[2], message);
  const entries = sequence(readOne(message, 'PKCS#12 authenticated safe'), 'PKCS#12 authenticated safe');
  if (entries.length !== 2) throw refuse('expected exactly two items in the authenticated safe');
  return entries.flatMap((entry) => safeContents(entry, password)).map((bag) => convertBag(bag, password));
}
