// Secret values a class says are base64 or hex decode as the Go providers decode them, so
// a value one provider accepts is never refused by another: Go's
// base64.StdEncoding.DecodeString (padding required, '\r' and '\n' skipped anywhere,
// nothing else) and hex.DecodeString (even length, either case).

/** Go's base64.StdEncoding after it dropped '\r' and '\n': padded groups of the standard alphabet. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const HEX = /^(?:[0-9A-Fa-f]{2})*$/;

/** The bytes of a decoded value, or why it does not decode (never quoting the value). */
export type GoDecoded = { readonly bytes: Buffer } | { readonly problem: string };

/** Decodes `text` as Go's base64.StdEncoding.DecodeString would. */
export function decodeGoBase64(text: string): GoDecoded {
  // Go's decoder skips only '\r' and '\n' (decodeQuantum); a space is an error.
  const kept = text.replace(/[\r\n]/g, '');
  if (!BASE64.test(kept)) return { problem: 'Go base64.StdEncoding: padded standard alphabet only' };
  return { bytes: Buffer.from(kept, 'base64') };
}

/** Decodes `text` as Go's hex.DecodeString would. */
export function decodeGoHex(text: string): GoDecoded {
  if (text.length % 2 !== 0) return { problem: 'odd length' };
  if (!HEX.test(text)) return { problem: 'a character that is not a hex digit' };
  return { bytes: Buffer.from(text, 'hex') };
}
