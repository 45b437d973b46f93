// The grpc-message trailer (grpc/doc/PROTOCOL-HTTP2.md, Status-Message): the status text
// as UTF-8, percent-encoded so the header value stays printable ASCII. Bytes 0x20–0x7E
// other than '%' go as they are; every other byte as %XX (upper-case hex, as grpc-go).

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

function isUnencoded(byte: number): boolean {
  return byte >= 0x20 && byte <= 0x7e && byte !== 0x25;
}

/** `text` as a grpc-message header value. Lone surrogates become U+FFFD (UTF-8 has no form for them). */
export function encodeGrpcMessage(text: string): string {
  let plain = true;
  for (let i = 0; i < text.length; i++) {
    if (!isUnencoded(text.charCodeAt(i))) { plain = false; break; }
  }
  if (plain) return text;
  let out = '';
  for (const byte of encoder.encode(text)) {
    out += isUnencoded(byte) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * The text a grpc-message header value carries. Never fails (the spec forbids throwing the
 * message away): a broken %-sequence stays as it is, invalid UTF-8 becomes U+FFFD.
 * Node hands header values over as latin1, so a raw byte ≥ 0x80 is one char ≤ 0xFF.
 */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes('%') && !/[^\x20-\x7e]/.test(value)) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x25 && i + 2 < value.length) {
      const hi = hexValue(value.charCodeAt(i + 1));
      const lo = hexValue(value.charCodeAt(i + 2));
      if (hi >= 0 && lo >= 0) { bytes.push(hi * 16 + lo); i += 2; continue; }
    }
    if (code <= 0xff) { bytes.push(code); continue; }
    const point = String.fromCodePoint(value.codePointAt(i) as number);
    bytes.push(...encoder.encode(point));
    i += point.length - 1;
  }
  return decoder.decode(Uint8Array.from(bytes));
}
