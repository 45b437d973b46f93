import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { Logger } from '../../lib/logging/logger.js';

/** Shortest key accepted from --hmac-key-file: below 128 bits a version could be brute-forced back to short contents. */
export const MIN_HMAC_KEY_BYTES = 16;

/**
 * Reads the key that turns contents into versions from `path` (`--hmac-key-file`),
 * creating it (32 random bytes, mode 0600) when the file does not exist. `''` means no
 * file: a per-process key, so versions change when the provider restarts. Every node that
 * reads the same key (a mounted Secret) gives the same versions.
 */
export async function loadOrCreateHmacKey(path: string, logger: Logger): Promise<Buffer> {
  if (path === '') {
    logger.info('no --hmac-key-file: versions use a per-process key and change when the provider restarts');
    return randomBytes(32);
  }
  try {
    const key = await readFile(path);
    if (key.length < MIN_HMAC_KEY_BYTES)
      throw new Error(`--hmac-key-file ${path} holds fewer than ${MIN_HMAC_KEY_BYTES} bytes`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const key = randomBytes(32);
    await writeFile(path, key, { mode: 0o600, flag: 'wx' });
    logger.info('created HMAC key file', { path });
    return key;
  }
}

/** A version key: raw bytes, or (cheaper per call on Node 24) the KeyObject versionKey made of them. */
export type HmacKey = Buffer | KeyObject;

/**
 * The key as a KeyObject, made once per process: Node 24's createHmac turns a Buffer key
 * into a KeyObject on every call (~12 µs there, six times the HMAC of 1 KiB).
 */
export function versionKey(key: Buffer): KeyObject {
  return createSecretKey(key);
}

/**
 * An object's version: hex HMAC-SHA-256 under the provider's key, so it changes exactly
 * when its input does and reveals nothing about the contents (a bare hash of a short
 * secret could be reversed by guessing). Without `context` the input is `contents`
 * alone (the `file` provider's versions, kept as they were); with it, the context's
 * UTF-8 length (4 bytes, big-endian), the context, then the contents, so no two
 * (context, contents) pairs feed the HMAC the same bytes.
 */
export function hmacVersion(key: HmacKey, contents: Buffer, context?: string): string {
  const hmac = createHmac('sha256', key);
  if (context !== undefined) {
    const bytes = Buffer.from(context, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hmac.update(length).update(bytes);
  }
  return hmac.update(contents).digest('hex');
}
