// objectEncoding: how a secret's value becomes the file's bytes, as Azure's provider
// v1.8.2 decodes it (provider.go getContentBytes): utf-8 as is; base64 with Go's
// base64.StdEncoding.DecodeString (padding required, "\r" and "\n" skipped anywhere,
// nothing else); hex with Go's hex.DecodeString (even length, either case).
import { SscError } from '../../lib/errors.js';
import type { ObjectEncoding } from './objects.js';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const HEX = /^(?:[0-9A-Fa-f]{2})*$/;

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
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(value, 'utf8');
    case 'base64': {
      // Go's decoder skips only '\r' and '\n' (decodeQuantum); a space is an error.
      const text = value.replace(/[\r\n]/g, '');
      if (!BASE64.test(text)) throw invalid(what, encoding, 'Go base64.StdEncoding: padded standard alphabet only');
      return Buffer.from(text, 'base64');
    }
    case 'hex':
      if (value.length % 2 !== 0) throw invalid(what, encoding, 'odd length');
      if (!HEX.test(value)) throw invalid(what, encoding, 'a character that is not a hex digit');
      return Buffer.from(value, 'hex');
  }
}
