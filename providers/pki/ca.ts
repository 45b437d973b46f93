// The CA a Mount signs with, from the nodePublishSecretRef: `ca.crt` holds one or more
// PEM certificates (the current CA and, during a CA rotation, older or newer ones),
// `ca.key` the private key of the one that signs. The signer is the certificate whose
// public key matches ca.key; every certificate of ca.crt that has not expired goes into
// the bundle written as the volume's ca.crt.
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { decodeAllPem, encodePem } from '../../lib/asn1/pem.js';
import { certificateFields } from '../../lib/asn1/x509-fields.js';
import { signatureAlgorithmFor } from '../../lib/asn1/x509-builder.js';
import { caExpired, caInvalid, caMissing } from './pki-errors.js';

/** nodePublishSecretRef keys. */
export const CA_CERT_KEY = 'ca.crt';
export const CA_KEY_KEY = 'ca.key';
/** Most certificates read from ca.crt. */
export const MAX_CA_CERTIFICATES = 100;

/** One certificate of ca.crt. */
export interface CaCertificate {
  readonly der: Buffer;
  readonly x509: X509Certificate;
  readonly subject: Buffer;
  readonly subjectKeyIdentifier: Buffer | undefined;
  /** Seconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
}

/** The signer and the bundle of one Mount. */
export interface LoadedCa {
  readonly signer: CaCertificate;
  readonly signerKey: KeyObject;
  /** First 4 octets of the signer certificate's SHA-256, hex (serial.ts). */
  readonly signerTag: string;
  /** PEM of every not-yet-expired certificate of ca.crt, in ca.crt's order. */
  readonly bundle: Buffer;
  /** The ca.crt object version: SHA-256 of `bundle`, hex (public data). */
  readonly bundleVersion: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);
const iso = (s: number) => new Date(s * 1000).toISOString();

/** A certificate as PEM (Go's encoding: 64-character lines). */
export function certificatePem(der: Buffer): Buffer {
  return encodePem({ type: 'CERTIFICATE', headers: new Map(), bytes: der }) as Buffer;
}

function readCertificates(pem: string, source: string): CaCertificate[] {
  const blocks = decodeAllPem(Buffer.from(pem, 'latin1')).blocks.filter((b) => b.type === 'CERTIFICATE');
  if (blocks.length === 0) throw caInvalid(`${source} ${CA_CERT_KEY} holds no PEM CERTIFICATE block`);
  if (blocks.length > MAX_CA_CERTIFICATES)
    throw caInvalid(`${source} ${CA_CERT_KEY} holds ${blocks.length} certificates; at most ${MAX_CA_CERTIFICATES}`);
  return blocks.map((block, i) => {
    try {
      const fields = certificateFields(block.bytes);
      return {
        der: block.bytes,
        x509: new X509Certificate(block.bytes),
        subject: fields.subject,
        subjectKeyIdentifier: fields.subjectKeyIdentifier,
        notBefore: seconds(fields.notBefore),
        notAfter: seconds(fields.notAfter),
      };
    } catch {
      throw caInvalid(`${source} ${CA_CERT_KEY}: certificate ${i + 1} is not a valid X.509 certificate`);
    }
  });
}

function readKey(pem: string, source: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    // Node's message may describe the input; ours names the key only.
    throw caInvalid(`${source} ${CA_KEY_KEY} is not an unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1)`);
  }
  try {
    signatureAlgorithmFor(key);
  } catch (err) {
    throw caInvalid(`${source} ${CA_KEY_KEY}: ${(err as Error).message}`);
  }
  return key;
}

/**
 * The signer and bundle from the nodePublishSecretRef (or `source`, named in messages: the
 * --ca-dir directory) at `now` (seconds). FAILED_PRECONDITION: CaMissing without ca.crt or
 * ca.key; CaInvalid when they cannot be read, no certificate matches the key or it is not a
 * CA; CaExpired when every certificate for the key is expired or not valid yet.
 */
export function loadCa(
  secrets: Readonly<Record<string, string>>,
  now: number,
  source = 'nodePublishSecretRef',
): LoadedCa {
  const certPem = secrets[CA_CERT_KEY];
  const keyPem = secrets[CA_KEY_KEY];
  if (certPem === undefined || keyPem === undefined) {
    const missing = [certPem === undefined ? CA_CERT_KEY : '', keyPem === undefined ? CA_KEY_KEY : '']
      .filter((k) => k !== '')
      .join(' and ');
    throw caMissing(
      source === 'nodePublishSecretRef'
        ? `the nodePublishSecretRef has no ${missing} (name a Secret holding the CA's ca.crt and ca.key)`
        : `${source} has no ${missing}`,
    );
  }
  const certificates = readCertificates(certPem, source);
  const signerKey = readKey(keyPem, source);
  const matching = certificates.filter((c) => c.x509.checkPrivateKey(signerKey));
  if (matching.length === 0)
    throw caInvalid(`no certificate in ${source} ${CA_CERT_KEY} has the public key of ${CA_KEY_KEY}`);
  const valid = matching.filter((c) => c.notBefore <= now && now < c.notAfter).sort((a, b) => b.notAfter - a.notAfter);
  const signer = valid[0];
  if (signer === undefined) {
    const latest = [...matching].sort((a, b) => b.notAfter - a.notAfter)[0] as CaCertificate;
    throw caExpired(
      latest.notAfter <= now
        ? `the CA certificate for ${CA_KEY_KEY} expired at ${iso(latest.notAfter)}`
        : `the CA certificate for ${CA_KEY_KEY} is not valid before ${iso(latest.notBefore)}`,
    );
  }
  if (!signer.x509.ca)
    throw caInvalid(
      `the certificate for ${CA_KEY_KEY} in ${CA_CERT_KEY} is not a CA (it needs basicConstraints CA:TRUE)`,
    );
  const seen = new Set<string>();
  const bundleParts: Buffer[] = [];
  for (const c of certificates) {
    const hex = c.der.toString('hex');
    if (c.notAfter <= now || seen.has(hex)) continue;
    seen.add(hex);
    bundleParts.push(certificatePem(c.der));
  }
  const bundle = Buffer.concat(bundleParts);
  return {
    signer,
    signerKey,
    signerTag: createHash('sha256').update(signer.der).digest('hex').slice(0, 8),
    bundle,
    bundleVersion: createHash('sha256').update(bundle).digest('hex'),
  };
}
