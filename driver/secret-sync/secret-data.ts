import { createHash } from 'node:crypto';
import { SscError } from '../../lib/errors.js';
import type { SecretObject } from '../spc/secret-provider-class.js';
import { tlsCertificateData, tlsPrivateKeyData } from './tls-secret-data.js';
import { TlsInputError } from '../../lib/asn1/tls-input-error.js';

/** The Secret type whose data is split into `tls.crt` and `tls.key`. */
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

function bad(secretName: string, message: string): SscError {
  return new SscError('failed-precondition', `secretObjects ${secretName}: ${message}`, {
    reason: 'InvalidSecretObject',
  });
}

/**
 * tls.crt or tls.key of a `kubernetes.io/tls` Secret from one object's contents (PEM or
 * a password-less PKCS#12 file), with the bytes upstream writes (tls-secret-data.ts).
 */
export function tlsPart(secretName: string, objectName: string, contents: Buffer, key: 'tls.crt' | 'tls.key'): Buffer {
  try {
    return key === 'tls.crt' ? tlsCertificateData(contents) : tlsPrivateKeyData(contents);
  } catch (err) {
    if (err instanceof TlsInputError)
      throw bad(secretName, `object ${JSON.stringify(objectName)} for ${key}: ${err.message}`);
    throw err;
  }
}

/**
 * Builds a synced Secret's data from the mounted files: each `data[]` entry
 * takes the file named by `objectName` (path relative to the mount) as `key`. For
 * `kubernetes.io/tls`, `tls.crt` and `tls.key` are converted as upstream converts them
 * (tlsPart), other keys are copied, and both tls keys are required. Errors name the
 * Secret and the object, never the contents.
 */
export function buildSecretData(
  object: SecretObject,
  files: ReadonlyMap<string, Buffer>,
  options: { dropMissing?: boolean } = {},
): Map<string, Buffer> {
  const data = new Map<string, Buffer>();
  for (const entry of object.data) {
    const contents = files.get(entry.objectName);
    // Opt-in (on-object-removed: remove): an object the provider no longer returns loses its key.
    if (contents === undefined && options.dropMissing) continue;
    if (contents === undefined)
      throw bad(
        object.secretName,
        `objectName ${JSON.stringify(entry.objectName)} is not a file in the mounted volume`,
      );
    if (data.has(entry.key)) throw bad(object.secretName, `key ${JSON.stringify(entry.key)} is listed twice`);
    const tlsKey =
      object.type === TLS_SECRET_TYPE && (entry.key === 'tls.crt' || entry.key === 'tls.key') ? entry.key : undefined;
    data.set(entry.key, tlsKey ? tlsPart(object.secretName, entry.objectName, contents, tlsKey) : contents);
  }
  if (object.type === TLS_SECRET_TYPE && (!data.has('tls.crt') || !data.has('tls.key'))) {
    throw bad(object.secretName, 'a kubernetes.io/tls Secret needs data entries for both tls.crt and tls.key');
  }
  return data;
}

/** SHA-256 over sorted keys and values: how the driver tells whether a Secret changed. */
export function secretDataDigest(data: ReadonlyMap<string, Buffer>): string {
  const hash = createHash('sha256');
  for (const key of [...data.keys()].sort()) {
    const value = data.get(key) as Buffer;
    hash.update(`${key.length}:${key}:${value.length}:`).update(value);
  }
  return hash.digest('hex');
}
