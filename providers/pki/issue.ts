// Issues one leaf certificate: a fresh key of the requested algorithm, a serial that
// carries the renewal facts (serial.ts), the pki policy's extensions, signed by the CA
// with the generic builder (lib/asn1/x509-builder.ts).
import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import {
  authorityKeyIdentifier,
  basicConstraints,
  buildCertificate,
  encodeCommonName,
  EKU,
  extKeyUsage,
  keyIdentifier,
  KEY_USAGE,
  keyUsage,
  subjectAltName,
  subjectKeyIdentifier,
  type GeneralName,
} from '../../lib/asn1/x509-builder.js';
import { certificatePem, type LoadedCa } from './ca.js';
import type { CertificateRequest, KeyAlgorithm } from './parameters.js';
import { encodeSerial, serialVersion } from './serial.js';

const generate = promisify(generateKeyPair);

/** A certificate just issued, ready to write. */
export interface IssuedCertificate {
  /** The serial as the object version of tls.crt and tls.key. */
  readonly version: string;
  /** PEM: the leaf, then the signing CA certificate. */
  readonly chain: Buffer;
  /** PEM PKCS#8 "PRIVATE KEY". */
  readonly key: Buffer;
  /** Seconds since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
}

/** A new private key (off the event loop: RSA-4096 takes a while). */
export async function generateLeafKey(algorithm: KeyAlgorithm): Promise<KeyObject> {
  switch (algorithm) {
    case 'ECDSA-P256':
      return (await generate('ec', { namedCurve: 'P-256' })).privateKey;
    case 'RSA-2048':
      return (await generate('rsa', { modulusLength: 2048 })).privateKey;
    case 'RSA-4096':
      return (await generate('rsa', { modulusLength: 4096 })).privateKey;
    case 'Ed25519':
      return (await generate('ed25519', {})).privateKey;
  }
}

/** The extensions of a leaf: CA:FALSE, key usage, EKU from usages, SANs, SKI and (when the CA has one) AKI. */
function leafExtensions(request: CertificateRequest, publicKey: KeyObject, ca: LoadedCa): Buffer[] {
  const usageBits = [
    KEY_USAGE.digitalSignature,
    ...(publicKey.asymmetricKeyType === 'rsa' ? [KEY_USAGE.keyEncipherment] : []),
  ];
  const names: GeneralName[] = [
    ...request.dnsNames.map((value) => ({ kind: 'dns' as const, value })),
    ...request.ipAddresses.map((value) => ({ kind: 'ip' as const, value })),
    ...request.uris.map((value) => ({ kind: 'uri' as const, value })),
  ];
  const caKeyId = ca.signer.subjectKeyIdentifier;
  return [
    basicConstraints(false),
    keyUsage(usageBits),
    extKeyUsage(request.usages.map((u) => (u === 'server' ? EKU.serverAuth : EKU.clientAuth))),
    ...(names.length > 0 ? [subjectAltName(names)] : []),
    subjectKeyIdentifier(keyIdentifier(publicKey)),
    ...(caKeyId ? [authorityKeyIdentifier(caKeyId)] : []),
  ];
}

/**
 * Issues `request` with `key` (generateLeafKey) signed by `ca` at `now` (seconds): valid
 * from now for its duration, but never past the signer's own notAfter.
 */
export function issueCertificate(
  request: CertificateRequest,
  key: KeyObject,
  ca: LoadedCa,
  now: number,
  random: (size: number) => Buffer,
): IssuedCertificate {
  const notBefore = now;
  const notAfter = Math.min(now + request.durationSeconds, ca.signer.notAfter);
  const serial = encodeSerial({ notBefore, notAfter, signerTag: ca.signerTag }, random(7));
  const publicKey = createPublicKey(key);
  const der = buildCertificate(
    {
      serial,
      issuer: ca.signer.subject,
      subject: encodeCommonName(request.commonName),
      notBefore: new Date(notBefore * 1000),
      notAfter: new Date(notAfter * 1000),
      publicKey,
      extensions: leafExtensions(request, publicKey, ca),
    },
    ca.signerKey,
  );
  return {
    version: serialVersion(serial),
    chain: Buffer.concat([certificatePem(der), certificatePem(ca.signer.der)]),
    key: Buffer.from(key.export({ type: 'pkcs8', format: 'pem' })),
    notBefore,
    notAfter,
  };
}
