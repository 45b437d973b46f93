// A certificate's private key and chain as Azure's provider v1.8.2 writes a
// certificate-backed secret (provider.go decodePKCS12, fetchCertChains,
// splitCertAndKey): the PFX read with golang.org/x/crypto/pkcs12 ToPEM and the empty
// password (lib/asn1/pkcs12.ts, the same reader), its keys re-marshalled as PKCS#8
// "PRIVATE KEY" (x509.MarshalPKCS8PrivateKey) before the certificates, bag headers
// dropped, every block written by Go's pem.EncodeToMemory; with --construct-pem-chain
// the certificates ordered leaf → root by matching each one's authority key id to
// another's subject key id, the original order kept when the chain is incomplete.
import { X509Certificate } from 'node:crypto';
import { SscError } from '../../lib/errors.js';
import { isContext, octets, oid, readOne, sequence, type Tlv } from '../../lib/asn1/der.js';
import { decodeAllPem, encodePem, type PemBlock } from '../../lib/asn1/pem.js';
import { pkcs12ToPem } from '../../lib/asn1/pkcs12.js';
import { encodePkcs8, parsePrivateKey } from '../../lib/asn1/private-key.js';
import { TlsInputError } from '../../lib/asn1/tls-input-error.js';

const CERTIFICATE = 'CERTIFICATE';
const OID_SUBJECT_KEY_ID = '2.5.29.14';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';

/** Why a certificate's secret cannot be written: FAILED_PRECONDITION `CertificateUnreadable`. */
export function certificateUnreadable(what: string, why: string): SscError {
  return new SscError('failed-precondition', `azure provider: ${what}: ${why}`, { reason: 'CertificateUnreadable' });
}

function pem(blocks: readonly PemBlock[]): Buffer {
  return Buffer.concat(blocks.map((b) => encodePem({ ...b, headers: new Map() }) ?? Buffer.alloc(0)));
}

/** Subject and authority key ids as Go's x509 parser fills SubjectKeyId and AuthorityKeyId (undefined: nil). */
export function keyIdentifiers(der: Buffer): { ski: Buffer | undefined; aki: Buffer | undefined } {
  const tbs = sequence(sequence(readOne(der, 'certificate'), 'certificate')[0], 'TBSCertificate');
  const extensions = tbs.find((f) => isContext(f, 3) && f.constructed);
  let ski: Buffer | undefined;
  let aki: Buffer | undefined;
  if (!extensions) return { ski, aki };
  for (const extension of sequence(readOne(extensions.content, 'extensions'), 'extensions')) {
    const fields = sequence(extension, 'extension');
    const id = oid(fields[0], 'extension id');
    const value = octets(fields[fields.length - 1], 'extension value');
    if (id === OID_SUBJECT_KEY_ID) ski = octets(readOne(value, 'subject key id'), 'subject key id');
    if (id === OID_AUTHORITY_KEY_ID) {
      // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING OPTIONAL, … }
      const keyId = sequence(readOne(value, 'authority key id'), 'authority key id').find(
        (f: Tlv) => isContext(f, 0) && !f.constructed,
      );
      aki = keyId?.content;
    }
  }
  return { ski, aki };
}

/**
 * The certificates ordered leaf → intermediates → root as upstream fetchCertChains
 * orders them: node i's parent is the first other node whose subject key id equals i's
 * authority key id (nil = empty, both nil never match); the leaf is the first node no
 * other names as parent. The input order when the chain does not cover every
 * certificate. Throws on a certificate Node cannot parse, no leaf, or a cycle.
 */
export function orderCertificateChain(certificates: readonly PemBlock[], what: string): PemBlock[] {
  if (certificates.length === 0) return [];
  const nodes = certificates.map((block, i) => {
    try {
      new X509Certificate(block.bytes);
      return { block, ...keyIdentifiers(block.bytes), parent: undefined as number | undefined, isParent: false };
    } catch (err) {
      throw certificateUnreadable(
        what,
        `certificate ${i + 1} of the chain cannot be parsed${err instanceof TlsInputError ? ` (${err.message})` : ''}`,
      );
    }
  });
  const same = (a: Buffer | undefined, b: Buffer | undefined) => (a ?? Buffer.alloc(0)).equals(b ?? Buffer.alloc(0));
  nodes.forEach((node, i) => {
    const j = nodes.findIndex(
      (other, k) => k !== i && !(node.aki === undefined && other.ski === undefined) && same(node.aki, other.ski),
    );
    if (j >= 0) {
      (nodes[j] as { isParent: boolean }).isParent = true;
      node.parent = j;
    }
  });
  const leaf = nodes.findIndex((n) => !n.isParent);
  if (leaf < 0)
    throw certificateUnreadable(what, 'no leaf certificate: every certificate signs another (a cycle of key ids)');
  const chain: PemBlock[] = [];
  for (let at: number | undefined = leaf; at !== undefined; at = (nodes[at] as { parent: number | undefined }).parent) {
    if (chain.length === nodes.length)
      throw certificateUnreadable(what, 'the certificate chain has a cycle of key ids');
    chain.push((nodes[at] as { block: PemBlock }).block);
  }
  // upstream: "certificate chain is not complete …": the order Key Vault gave.
  return chain.length === nodes.length ? chain : [...certificates];
}

/**
 * PEM of a certificate-backed secret stored as PKCS#12 (`value`, base64 as Key Vault
 * returns it): keys first as PKCS#8, then the certificates (ordered when `constructChain`).
 * Throws FAILED_PRECONDITION (`CertificateUnreadable`) naming `what` and why
 * (e.g. an AES-encrypted PFX, which Go's pkcs12 package cannot read either).
 */
export function pfxToPem(value: string, constructChain: boolean, what: string): Buffer {
  // Go's base64.StdEncoding.DecodeString: "\r" and "\n" skipped, padding required.
  const text = value.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text))
    throw certificateUnreadable(what, 'the PKCS#12 value is not base64');
  let blocks: PemBlock[];
  try {
    blocks = pkcs12ToPem(Buffer.from(text, 'base64'));
  } catch (err) {
    if (err instanceof TlsInputError) throw certificateUnreadable(what, err.message);
    throw err;
  }
  const keys = blocks
    .filter((b) => b.type !== CERTIFICATE)
    .map((b) => {
      try {
        return { type: b.type, headers: new Map<string, string>(), bytes: encodePkcs8(parsePrivateKey(b.bytes)) };
      } catch (err) {
        if (err instanceof TlsInputError) throw certificateUnreadable(what, `the PKCS#12 private key: ${err.message}`);
        throw err;
      }
    });
  const certificates = blocks.filter((b) => b.type === CERTIFICATE);
  // upstream fetchCertChains: "no leaf found" when there is no certificate at all.
  if (constructChain && certificates.length === 0)
    throw certificateUnreadable(what, 'the PKCS#12 file holds no certificate');
  return Buffer.concat([pem(keys), pem(constructChain ? orderCertificateChain(certificates, what) : certificates)]);
}

/**
 * A certificate-backed secret stored as PEM (`application/x-pem-file`). Upstream
 * passes it as is; here too when it already has its keys first and its chain in
 * order (or `constructChain` is off), else its blocks are rewritten keys first, then
 * the certificates leaf → root, each as Go's pem.EncodeToMemory writes it.
 */
export function pemSecretToPem(value: string, constructChain: boolean, what: string): Buffer {
  const original = Buffer.from(value, 'utf8');
  if (!constructChain) return original;
  const { blocks } = decodeAllPem(original);
  const keys = blocks.filter((b) => b.type !== CERTIFICATE);
  const certificates = blocks.filter((b) => b.type === CERTIFICATE);
  const ordered = orderCertificateChain(certificates, what);
  const keysFirst = blocks.slice(0, keys.length).every((b) => b.type !== CERTIFICATE);
  if (keysFirst && ordered.every((b, i) => b === certificates[i])) return original;
  return Buffer.concat([pem(keys), pem(ordered)]);
}

/**
 * The `.crt` and `.key` files of --write-cert-and-key-in-separate-files (upstream
 * splitCertAndKey): every CERTIFICATE block, and every other block, re-encoded with
 * their headers. Empty when the content holds no PEM (objectFormat: pfx), as upstream.
 */
export function splitCertAndKey(content: Buffer): { readonly cert: Buffer; readonly key: Buffer } {
  const { blocks } = decodeAllPem(content);
  const encode = (bs: PemBlock[]) => Buffer.concat(bs.map((b) => encodePem(b) ?? Buffer.alloc(0)));
  return {
    cert: encode(blocks.filter((b) => b.type === CERTIFICATE)),
    key: encode(blocks.filter((b) => b.type !== CERTIFICATE)),
  };
}
