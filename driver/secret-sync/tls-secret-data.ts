import { decodeAllPem, encodePem, type PemBlock } from '../../lib/asn1/pem.js';
import { pkcs12ToPem } from '../../lib/asn1/pkcs12.js';
import { parsePrivateKey, upstreamKeyBlock } from '../../lib/asn1/private-key.js';
import { TlsInputError } from '../../lib/asn1/tls-input-error.js';

// tls.crt and tls.key of a kubernetes.io/tls Secret, byte for byte as upstream v1.6.1
// writes them (pkg/util/secretutil GetCertPart): PEM blocks re-encoded the way Go
// encodes them, a password-less PKCS#12 file converted when the object holds no PEM,
// keys rewritten as PKCS#1 or SEC1. Where upstream writes something unusable (an empty
// key block, an empty tls.crt) we refuse instead; docs/upgrading-from-upstream.md lists it.

const CERTIFICATE = 'CERTIFICATE';

function label(block: PemBlock): string {
  return /^[A-Z0-9 -]{1,64}$/.test(block.type) ? `"${block.type}"` : '(unusual label)';
}

function encodeAll(blocks: readonly PemBlock[]): Buffer {
  return Buffer.concat(blocks.map((b) => encodePem(b) ?? Buffer.alloc(0)));
}

// Upstream hands what follows the last PEM block (all of it when there is none) to the
// PKCS#12 reader, with the empty password.
// `missing` is the error when the object did hold PEM: the rest is then rarely PKCS#12.
function fromPkcs12(rest: Buffer, hadPem: boolean, missing: string): PemBlock[] {
  try {
    return pkcs12ToPem(rest);
  } catch (err) {
    if (!(err instanceof TlsInputError)) throw err;
    if (hadPem) throw new TlsInputError(missing);
    throw new TlsInputError(`neither PEM nor a PKCS#12 file upstream can read (${err.message})`);
  }
}

/** tls.crt: every CERTIFICATE block in order (from PEM, else from PKCS#12), as Go writes PEM. */
export function tlsCertificateData(contents: Buffer): Buffer {
  const { blocks, rest } = decodeAllPem(contents);
  let certificates = blocks.filter((b) => b.type === CERTIFICATE);
  if (certificates.length === 0)
    certificates = fromPkcs12(rest, blocks.length > 0, `no PEM ${CERTIFICATE} block for tls.crt`).filter(
      (b) => b.type === CERTIFICATE,
    );
  if (certificates.length === 0) throw new TlsInputError('the PKCS#12 file holds no certificate for tls.crt');
  return encodeAll(certificates);
}

/**
 * tls.key: the last PEM block that is not a CERTIFICATE (else the last key of a
 * PKCS#12 file), whatever its label, written as "RSA PRIVATE KEY" (PKCS#1) or
 * "EC PRIVATE KEY" (SEC1).
 */
export function tlsPrivateKeyData(contents: Buffer): Buffer {
  const { blocks, rest } = decodeAllPem(contents);
  const nonCertificates = blocks.filter((b) => b.type !== CERTIFICATE);
  let source = nonCertificates[nonCertificates.length - 1];
  let where = source ? `the last PEM block that is not a ${CERTIFICATE} (${label(source)})` : '';
  if (!source) {
    const keys = fromPkcs12(rest, blocks.length > 0, 'no PEM private key block for tls.key').filter(
      (b) => b.type === 'PRIVATE KEY',
    );
    source = keys[keys.length - 1];
    where = "the PKCS#12 file's private key";
  }
  if (!source) throw new TlsInputError('the PKCS#12 file holds no private key for tls.key');
  if (source.type === 'ENCRYPTED PRIVATE KEY' || (source.headers.get('Proc-Type') ?? '').includes('ENCRYPTED')) {
    throw new TlsInputError(`${where} is encrypted: only unencrypted private keys can be written to tls.key`);
  }
  try {
    return encodeAll([upstreamKeyBlock(parsePrivateKey(source.bytes))]);
  } catch (err) {
    if (err instanceof TlsInputError) throw new TlsInputError(`${where} is not a usable private key: ${err.message}`);
    throw err;
  }
}
