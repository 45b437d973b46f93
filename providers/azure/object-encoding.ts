// objectEncoding: how a secret's value becomes the file's bytes, as Azure's provider
// v1.8.2 decodes it (provider.go getContentBytes): utf-8 as is; base64 with Go's
// base64.StdEncoding.DecodeString (padding required, "\r" and "\n" skipped anywhere,
// nothing else); hex with Go's hex.DecodeString (even length, either case).
import { SscError } from '../../lib/errors.js';
import { decodeGoBase64, decodeGoHex } from '../framework/go-encoding.js';
import type { ObjectEncoding } from './objects.js';

function invalid(what: string, encoding: ObjectEncoding, why: string): SscError {
  return new SscError(
    'invalid-argument',
    `azure provider: the value of ${what} is not valid ${encoding} (${why}) although its objectEncoding says so`,
    { reason: 'InvalidSecretEncoding' },
  );
}

/**
 * The bytes of `value` under `encoding`. Throws INVALID_ARGUMENT (`InvalidSecretEncoding`)
 * naming `what` (the object) when the value does not decode; never shows the value.
 */
export function decodeObjectEncoding(value: string, encoding: ObjectEncoding, what: string): Buffer {
  if (encoding === 'utf-8') return Buffer.from(value, 'utf8');
  const decoded = encoding === 'base64' ? decodeGoBase64(value) : decodeGoHex(value);
  if ('problem' in decoded) throw invalid(what, encoding, decoded.problem);
  return decoded.bytes;
}
