// The bytes each Key Vault object becomes, as Azure's provider v1.8.2 writes them
// (provider.go getSecret, getKey, getCertificate, getContentBytes): a secret's value
// (a certificate-backed one as PEM, key first, or its PFX as stored with
// objectFormat: pfx), a key's public half as PEM, a certificate's DER as PEM. With
// --write-cert-and-key-in-separate-files a certificate-backed secret also gets
// `<file>.crt` and `<file>.key`. objectEncoding applies to every file of a secret,
// as upstream decodes each one.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { encodePem } from '../../lib/asn1/pem.js';
import { jwkToPublicKeyPem, type PublicJwk } from './jwk-pem.js';
import { decodeObjectEncoding } from './object-encoding.js';
import type { KeyVaultObject } from './objects.js';
import { pemSecretToPem, pfxToPem, splitCertAndKey } from './pem-chain.js';

/** The provider flags that shape certificate output (upstream cmd/main.go names). */
export interface RenderOptions {
  /** --construct-pem-chain (default true): order a certificate's chain leaf → root. */
  readonly constructPemChain: boolean;
  /** --write-cert-and-key-in-separate-files (default false): also write `.crt` and `.key`. */
  readonly writeCertAndKeyInSeparateFiles: boolean;
}

/** One file of an object: appended to its file name (`''`, `.crt`, `.key`) and its bytes. */
export interface RenderedContent {
  readonly suffix: '' | '.crt' | '.key';
  readonly bytes: Buffer;
}

/** What the integrator reads from a SecretBundle (the SDK's KeyVaultSecret). */
export interface SecretContent {
  readonly value: string;
  readonly contentType: string | undefined;
  /** True when the secret backs a certificate (its `kid` is set). */
  readonly certificateBacked: boolean;
}

/** Content types of a certificate's secret (upstream CertTypePem, CertTypePfx). */
export const PEM_CONTENT_TYPE = 'application/x-pem-file';
/** The PKCS#12 content type Key Vault gives a certificate's secret. */
export const PFX_CONTENT_TYPE = 'application/x-pkcs12';

/** An object (and the version read) for messages: `secret "db" (version "abc…")`. */
export function describeObject(object: KeyVaultObject, version?: string): string {
  return `${object.objectType} ${quoted(object.objectName, 127)}${version === undefined ? '' : ` (version ${quoted(version, 64)})`}`;
}

function certificateText(
  secret: SecretContent,
  object: KeyVaultObject,
  options: RenderOptions,
  what: string,
): string | Buffer {
  switch (secret.contentType) {
    case PEM_CONTENT_TYPE:
      return pemSecretToPem(secret.value, options.constructPemChain, what);
    // objectFormat: pfx: the base64 text as stored (EqualFold in upstream getSecret).
    case PFX_CONTENT_TYPE:
      return object.objectFormat === 'pfx' ? secret.value : pfxToPem(secret.value, options.constructPemChain, what);
    default:
      throw new SscError(
        'failed-precondition',
        `azure provider: ${what} backs a certificate with content type ` +
          `${quoted(secret.contentType ?? '', 64)}; only ${PEM_CONTENT_TYPE} and ${PFX_CONTENT_TYPE} ` +
          `can be written`,
        { reason: 'UnsupportedContentType' },
      );
  }
}

/**
 * The files of a `secret` object: `.crt` and `.key` first when asked for and the secret
 * backs a certificate, then the object's own file; each decoded by objectEncoding.
 * Throws FAILED_PRECONDITION for a certificate that cannot be converted, and
 * INVALID_ARGUMENT (`InvalidSecretEncoding`) for a value that does not decode.
 */
export function renderSecret(
  object: KeyVaultObject,
  secret: SecretContent,
  options: RenderOptions,
  what: string,
): RenderedContent[] {
  const out: { suffix: RenderedContent['suffix']; text: string | Buffer }[] = [];
  if (secret.certificateBacked) {
    const text = certificateText(secret, object, options, what);
    if (options.writeCertAndKeyInSeparateFiles) {
      const { cert, key } = splitCertAndKey(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'));
      out.push({ suffix: '.crt', text: cert }, { suffix: '.key', text: key });
    }
    out.push({ suffix: '', text });
  } else {
    out.push({ suffix: '', text: secret.value });
  }
  return out.map(({ suffix, text }) => ({
    suffix,
    // Go converts the string back to bytes before decoding: PEM text is ASCII.
    bytes:
      object.objectEncoding === 'utf-8' && Buffer.isBuffer(text)
        ? text
        : decodeObjectEncoding(Buffer.isBuffer(text) ? text.toString('latin1') : text, object.objectEncoding, what),
  }));
}

/** The file of a `key` object: the JWK's public key as "PUBLIC KEY" PEM. */
export function renderKey(jwk: PublicJwk, what: string): RenderedContent[] {
  return [{ suffix: '', bytes: jwkToPublicKeyPem(jwk, what) }];
}

/** The file of a `cert` object: its DER (`cer`) as one "CERTIFICATE" PEM block. */
export function renderCertificate(cer: Uint8Array): RenderedContent[] {
  return [
    { suffix: '', bytes: encodePem({ type: 'CERTIFICATE', headers: new Map(), bytes: Buffer.from(cer) }) as Buffer },
  ];
}
