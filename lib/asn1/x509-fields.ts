// The few fields of an X.509 certificate an issuer needs from its CA certificate that
// node:crypto's X509Certificate does not give as bytes: the subject Name DER (copied
// verbatim into a leaf's issuer so chains match byte for byte), the validity as Dates,
// and the subjectKeyIdentifier (a leaf's authorityKeyIdentifier).
import { children, isContext, octets, oid, readOne, sequence, TAG, time, isUniversal, type Tlv } from './der.js';
import { TlsInputError } from './tls-input-error.js';

/** What an issuer reads from a CA certificate. */
export interface CertificateFields {
  /** The subject Name, its whole DER TLV. */
  readonly subject: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The subjectKeyIdentifier extension's key id, when the certificate has one. */
  readonly subjectKeyIdentifier: Buffer | undefined;
}

const SKI = '2.5.29.14';

function extensionsOf(fields: readonly Tlv[]): Tlv[] {
  const wrapped = fields.find((f) => isContext(f, 3));
  if (!wrapped) return [];
  const [list] = children(wrapped, 'certificate extensions');
  return sequence(list, 'certificate extensions');
}

/** Reads a certificate's DER; throws TlsInputError naming the structure when it is not one. */
export function certificateFields(der: Buffer): CertificateFields {
  const [tbs] = sequence(readOne(der, 'certificate'), 'certificate');
  const fields = sequence(tbs, 'TBSCertificate');
  // version [0] is optional (v1 certificates); serial, signature, issuer, validity, subject follow.
  const at = isContext(fields[0], 0) ? 1 : 0;
  const validity = sequence(fields[at + 3], 'certificate validity');
  const subject = fields[at + 4];
  if (!isUniversal(subject, TAG.SEQUENCE)) throw new TlsInputError('certificate subject: expected SEQUENCE');
  let subjectKeyIdentifier: Buffer | undefined;
  for (const ext of extensionsOf(fields)) {
    const parts = sequence(ext, 'certificate extension');
    if (oid(parts[0], 'certificate extension') !== SKI) continue;
    const value = octets(parts[parts.length - 1], 'subjectKeyIdentifier');
    subjectKeyIdentifier = octets(readOne(value, 'subjectKeyIdentifier'), 'subjectKeyIdentifier');
  }
  return {
    subject: subject.full,
    notBefore: time(validity[0], 'certificate notBefore'),
    notAfter: time(validity[1], 'certificate notAfter'),
    subjectKeyIdentifier,
  };
}
