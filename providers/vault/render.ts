// A Vault secret's data becomes a file as in HashiCorp's provider (internal/provider,
// getSecret, keyFromData and decodeValue; checked at v1.7.4): `secretKey` picks a key, a
// string value is written as is and any other value as JSON; `encoding` (compared
// case-insensitively, utf-8 by default) then decodes the value with Go's
// base64.StdEncoding (standard alphabet, padded, line breaks ignored) or hex.DecodeString
// (even length). Without `secretKey` HashiCorp's provider writes the whole response
// (request_id, lease fields, data), so the file changes on every read; we write the data
// alone as stable JSON (stable-json.ts), and `encoding` does not apply, as there.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { decodeGoBase64, decodeGoHex } from '../framework/go-encoding.js';
import { hmacVersion, type HmacKey } from '../framework/hmac-version.js';
import type { ProviderFile } from '../framework/provider.js';
import type { VaultObject } from './objects.js';
import { objectConfigKey } from './request-key.js';
import { stableJson } from './stable-json.js';

/** Names the version scheme inside the HMAC input, so a later scheme can never give the same versions. */
const VERSION_SCHEME = 'vault-object/1';

/** One object rendered: its file and its version. */
export interface RenderedObject {
  readonly file: ProviderFile;
  readonly version: { readonly id: string; readonly version: string };
}

function where(object: VaultObject): string {
  return `object ${quoted(object.objectName, 64)}: secret ${quoted(object.secretPath, 128)}`;
}

function decode(object: VaultObject, text: string): Buffer {
  if (object.encoding === 'utf-8') return Buffer.from(text, 'utf8');
  const decoded = object.encoding === 'base64' ? decodeGoBase64(text) : decodeGoHex(text);
  if ('problem' in decoded) {
    // The value itself is never shown: it is the secret.
    throw new SscError(
      'invalid-argument',
      `vault provider: ${where(object)}: the value of key ${quoted(object.secretKey ?? '', 64)} is not valid ${object.encoding} (encoding: ${object.encoding})`,
      { reason: 'InvalidSecretEncoding' },
    );
  }
  return decoded.bytes;
}

/**
 * The file contents of `object` from its secret's `data` (for KV v2 the inner `data`,
 * not the metadata). A `secretKey` the data lacks is NOT_FOUND naming the path and key;
 * a value that does not decode as `encoding` is INVALID_ARGUMENT. Messages never hold
 * a value.
 */
export function renderContents(object: VaultObject, data: Readonly<Record<string, unknown>>): Buffer {
  if (object.secretKey === undefined) return Buffer.from(stableJson(data), 'utf8');
  if (!Object.hasOwn(data, object.secretKey)) {
    throw new SscError('not-found', `vault provider: ${where(object)} has no key ${quoted(object.secretKey, 64)}`, {
      reason: 'SecretKeyNotFound',
    });
  }
  const value = data[object.secretKey];
  return decode(object, typeof value === 'string' ? value : stableJson(value));
}

/**
 * The version of `object` with `contents`: an HMAC under the provider's key of the
 * object's configuration and contents, so it is the same on every node and restart with
 * the same key, changes when either changes, and reveals nothing (two objects with the
 * same contents still get different versions).
 */
export function objectVersion(hmacKey: HmacKey, object: VaultObject, contents: Buffer): string {
  // The same configuration key the lease store indexes by (request-key.ts): one field list.
  return hmacVersion(hmacKey, contents, `${VERSION_SCHEME} ${objectConfigKey(object)}`);
}

/** `object` rendered from its secret's `data`: the file (mode `filePermission`, else `defaultMode`) and its version. */
export function renderObject(
  object: VaultObject,
  data: Readonly<Record<string, unknown>>,
  defaultMode: number,
  hmacKey: HmacKey,
): RenderedObject {
  const contents = renderContents(object, data);
  return {
    file: { path: object.objectName, mode: object.filePermission ?? defaultMode, contents },
    version: { id: object.objectName, version: objectVersion(hmacKey, object, contents) },
  };
}
