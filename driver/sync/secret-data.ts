import { createHash } from 'node:crypto';
import { SscError } from '../../proto/runtime/errors.js';
import type { SecretObject } from '../spc/secret-provider-class.js';

/** The Secret type whose data is split into `tls.crt` and `tls.key`. */
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

/** One PEM block: its label (CERTIFICATE, PRIVATE KEY, …) and its full text. */
interface PemBlock {
  readonly label: string;
  readonly text: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

function pemBlocks(contents: Buffer): PemBlock[] {
  return [...contents.toString('utf8').matchAll(PEM_BLOCK)].map((m) => ({ label: m[1] ?? '', text: m[0] }));
}

function joinBlocks(blocks: readonly PemBlock[]): Buffer {
  return Buffer.from(blocks.map((b) => `${b.text}\n`).join(''));
}

function bad(secretName: string, message: string): SscError {
  return new SscError('failed-precondition', `secretObjects ${secretName}: ${message}`, { reason: 'InvalidSecretObject' });
}

/**
 * Splits PEM contents for a `kubernetes.io/tls` Secret: `tls.crt` gets every
 * CERTIFICATE block (leaf first, as the provider ordered them), `tls.key` the private key.
 */
export function splitTls(secretName: string, objectName: string, contents: Buffer, key: string): Buffer {
  const blocks = pemBlocks(contents);
  if (key === 'tls.crt') {
    const certs = blocks.filter((b) => b.label === 'CERTIFICATE');
    if (certs.length === 0) throw bad(secretName, `object ${JSON.stringify(objectName)} holds no PEM certificate for tls.crt`);
    return joinBlocks(certs);
  }
  const keys = blocks.filter((b) => b.label.endsWith('PRIVATE KEY'));
  if (keys.length !== 1) throw bad(secretName, `object ${JSON.stringify(objectName)} must hold exactly one PEM private key for tls.key, found ${keys.length}`);
  return joinBlocks(keys);
}

/**
 * Builds a synced Secret's data from the mounted files (SPEC 7): each `data[]` entry
 * takes the file named by `objectName` (path relative to the mount) as `key`. For
 * `kubernetes.io/tls`, `tls.crt` and `tls.key` are split out of PEM contents, and both
 * keys are required. Errors name the Secret and the object, never the contents.
 */
export function buildSecretData(object: SecretObject, files: ReadonlyMap<string, Buffer>, options: { dropMissing?: boolean } = {}): Map<string, Buffer> {
  const data = new Map<string, Buffer>();
  for (const entry of object.data) {
    const contents = files.get(entry.objectName);
    // Opt-in (on-object-removed: remove): an object the provider no longer returns loses its key.
    if (contents === undefined && options.dropMissing) continue;
    if (contents === undefined) throw bad(object.secretName, `objectName ${JSON.stringify(entry.objectName)} is not a file in the mounted volume`);
    if (data.has(entry.key)) throw bad(object.secretName, `key ${JSON.stringify(entry.key)} is listed twice`);
    const isTlsKey = object.type === TLS_SECRET_TYPE && (entry.key === 'tls.crt' || entry.key === 'tls.key');
    data.set(entry.key, isTlsKey ? splitTls(object.secretName, entry.objectName, contents, entry.key) : contents);
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
