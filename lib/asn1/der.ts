import { TlsInputError } from './tls-input-error.js';

// A small, strict DER reader and writer for the structures a kubernetes.io/tls Secret
// is built from (PKCS#1, PKCS#8, SEC1, PKCS#12). Strict as Go's encoding/asn1, which
// upstream parses them with: definite, minimal lengths and tags, minimal integers;
// indefinite (BER) lengths are refused.

/** Universal tag numbers used here. */
export const TAG = Object.freeze({
  INTEGER: 2,
  BIT_STRING: 3,
  OCTET_STRING: 4,
  NULL: 5,
  OID: 6,
  SEQUENCE: 16,
  SET: 17,
});
/** Tag classes (the top two bits of the identifier octet). */
export const CLASS = Object.freeze({ UNIVERSAL: 0, CONTEXT: 2 });

/** One TLV: identifier fields, the content octets and the whole encoding. */
export interface Tlv {
  readonly tagClass: number;
  readonly constructed: boolean;
  readonly tag: number;
  readonly content: Buffer;
  readonly full: Buffer;
}

function bad(what: string, problem: string): TlsInputError {
  return new TlsInputError(`${what}: ${problem}`);
}

/** Reads the TLV at `offset`; returns it and the offset after it. */
export function readTlv(buf: Buffer, offset: number, what: string): { tlv: Tlv; next: number } {
  let at = offset;
  const first = buf[at++];
  if (first === undefined) throw bad(what, 'truncated DER (no tag)');
  let tag = first & 0x1f;
  if (tag === 0x1f) {
    tag = 0;
    for (let i = 0; ; i++) {
      const b = buf[at++];
      if (b === undefined || i >= 4) throw bad(what, 'truncated or oversized DER tag');
      if (i === 0 && b === 0x80) throw bad(what, 'non-minimal DER tag');
      tag = tag * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    if (tag < 0x1f) throw bad(what, 'non-minimal DER tag');
  }
  const lenByte = buf[at++];
  if (lenByte === undefined) throw bad(what, 'truncated DER (no length)');
  let length = lenByte;
  if (lenByte === 0x80) throw bad(what, 'indefinite length (BER, not DER)');
  if (lenByte > 0x80) {
    length = 0;
    for (let i = 0; i < (lenByte & 0x7f); i++) {
      const b = buf[at++];
      if (b === undefined) throw bad(what, 'truncated DER length');
      if (length >= 1 << 23) throw bad(what, 'DER length too large');
      length = length * 256 + b;
      if (length === 0) throw bad(what, 'superfluous leading zeros in DER length');
    }
    if (length < 0x80) throw bad(what, 'non-minimal DER length');
  }
  if (at + length > buf.length) throw bad(what, 'DER data truncated');
  const tlv = {
    tagClass: first >> 6,
    constructed: (first & 0x20) !== 0,
    tag,
    content: buf.subarray(at, at + length),
    full: buf.subarray(offset, at + length),
  };
  return { tlv, next: at + length };
}

/** Reads exactly one TLV filling `buf` (trailing bytes are an error). */
export function readOne(buf: Buffer, what: string): Tlv {
  const { tlv, next } = readTlv(buf, 0, what);
  if (next !== buf.length) throw bad(what, 'trailing data after DER value');
  return tlv;
}

/** The TLVs inside a constructed value, in order. */
export function children(tlv: Tlv, what: string): Tlv[] {
  if (!tlv.constructed) throw bad(what, 'expected a constructed DER value');
  const out: Tlv[] = [];
  for (let at = 0; at < tlv.content.length;) {
    const r = readTlv(tlv.content, at, what);
    out.push(r.tlv);
    at = r.next;
  }
  return out;
}

/** Whether `tlv` is the universal type `tag` (SEQUENCE and SET constructed, the rest primitive). */
export function isUniversal(tlv: Tlv | undefined, tag: number): tlv is Tlv {
  const constructed = tag === TAG.SEQUENCE || tag === TAG.SET;
  return tlv !== undefined && tlv.tagClass === CLASS.UNIVERSAL && tlv.tag === tag && tlv.constructed === constructed;
}

/** Throws unless `tlv` is the universal type `tag`. */
export function expectUniversal(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!isUniversal(tlv, tag)) throw bad(what, `expected ${Object.entries(TAG).find(([, t]) => t === tag)?.[0] ?? tag}`);
  return tlv;
}

/** Whether `tlv` is the context-specific tag [n]. */
export function isContext(tlv: Tlv | undefined, n: number): tlv is Tlv {
  return tlv !== undefined && tlv.tagClass === CLASS.CONTEXT && tlv.tag === n;
}

/** The children of a SEQUENCE (or SET). */
export function sequence(tlv: Tlv | undefined, what: string, tag: number = TAG.SEQUENCE): Tlv[] {
  return children(expectUniversal(tlv, tag, what), what);
}

/** An INTEGER's value (two's complement, minimally encoded). */
export function integer(tlv: Tlv | undefined, what: string): bigint {
  const c = expectUniversal(tlv, TAG.INTEGER, what).content;
  if (c.length === 0) throw bad(what, 'empty INTEGER');
  if (c.length > 1 && ((c[0] === 0 && (c[1] as number) < 0x80) || (c[0] === 0xff && (c[1] as number) >= 0x80)))
    throw bad(what, 'INTEGER not minimally encoded');
  const value = BigInt(`0x${c.toString('hex')}`);
  return (c[0] as number) >= 0x80 ? value - (1n << BigInt(c.length * 8)) : value;
}

/** An INTEGER that fits a Go int (64 bits), as upstream's structures declare them. */
export function smallInteger(tlv: Tlv | undefined, what: string): number {
  const n = integer(tlv, what);
  if (n < -(1n << 63n) || n >= 1n << 63n) throw bad(what, 'INTEGER too large');
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) throw bad(what, 'INTEGER too large');
  return Number(n);
}

/** An OBJECT IDENTIFIER in dotted form. */
export function oid(tlv: Tlv | undefined, what: string): string {
  const c = expectUniversal(tlv, TAG.OID, what).content;
  if (c.length === 0) throw bad(what, 'empty OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let value = 0;
  let started = false;
  for (const b of c) {
    if (!started && b === 0x80) throw bad(what, 'OBJECT IDENTIFIER not minimally encoded');
    started = true;
    value = value * 128 + (b & 0x7f);
    if (value > 0x7fffffff) throw bad(what, 'OBJECT IDENTIFIER arc too large');
    if ((b & 0x80) === 0) {
      arcs.push(value);
      value = 0;
      started = false;
    }
  }
  if (started) throw bad(what, 'truncated OBJECT IDENTIFIER');
  const head = arcs[0] as number;
  const first = head < 80 ? Math.floor(head / 40) : 2;
  return [first, head - first * 40, ...arcs.slice(1)].join('.');
}

/** A primitive OCTET STRING's octets. */
export function octets(tlv: Tlv | undefined, what: string): Buffer {
  return expectUniversal(tlv, TAG.OCTET_STRING, what).content;
}

// --- writing ---

function lengthOctets(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with a one-octet identifier (tag < 31). */
export function encodeTlv(identifier: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([identifier]), lengthOctets(content.length), content]);
}

/** A SEQUENCE of already-encoded values. */
export function encodeSequence(parts: readonly Buffer[]): Buffer {
  return encodeTlv(0x30, Buffer.concat(parts));
}

/** A non-negative INTEGER, minimally encoded. */
export function encodeInteger(n: bigint): Buffer {
  if (n < 0n) throw new RangeError('negative INTEGER');
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if ((bytes[0] as number) >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return encodeTlv(0x02, bytes);
}

/** Big-endian unsigned bytes of `n`, left-padded with zeros to `size`. */
export function unsignedBytes(n: bigint, size: number): Buffer {
  const hex = n.toString(16).padStart(size * 2, '0');
  if (hex.length > size * 2) throw new RangeError('value does not fit');
  return Buffer.from(hex, 'hex');
}

/** Unsigned big-endian bytes as a bigint. */
export function unsignedValue(bytes: Buffer): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`);
}

/** A BOOLEAN (DER: TRUE is 0xff). */
export function encodeBoolean(value: boolean): Buffer {
  return encodeTlv(0x01, Buffer.from([value ? 0xff : 0x00]));
}

/** An OCTET STRING holding `bytes`. */
export function encodeOctetString(bytes: Buffer): Buffer {
  return encodeTlv(0x04, bytes);
}

/** A BIT STRING of whole octets (no unused bits), e.g. a public key or a signature. */
export function encodeBitString(bytes: Buffer): Buffer {
  return encodeTlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
}

/**
 * A named-bit BIT STRING (KeyUsage): bit 0 is the most significant bit of the first
 * octet; DER drops trailing zero bits and counts them as unused.
 */
export function encodeNamedBits(bits: readonly number[]): Buffer {
  const highest = bits.length === 0 ? -1 : Math.max(...bits);
  const octetCount = Math.floor(highest / 8) + 1;
  const bytes = Buffer.alloc(highest < 0 ? 0 : octetCount);
  for (const bit of bits) bytes[Math.floor(bit / 8)] = (bytes[Math.floor(bit / 8)] as number) | (0x80 >> (bit % 8));
  const unused = highest < 0 ? 0 : 7 - (highest % 8);
  return encodeTlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]));
}

/** A UTF8String. */
export function encodeUtf8String(text: string): Buffer {
  return encodeTlv(0x0c, Buffer.from(text, 'utf8'));
}

/**
 * An X.509 Time (RFC 5280 4.1.2.5): UTCTime `YYMMDDHHMMSSZ` for years 1950–2049,
 * GeneralizedTime `YYYYMMDDHHMMSSZ` otherwise; whole seconds, UTC.
 */
export function encodeTime(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050
    ? encodeTlv(0x17, Buffer.from(digits.slice(2), 'latin1'))
    : encodeTlv(0x18, Buffer.from(digits, 'latin1'));
}

/** An X.509 Time (UTCTime or GeneralizedTime, seconds, `Z`) as a Date. */
export function time(tlv: Tlv | undefined, what: string): Date {
  if (tlv === undefined || tlv.tagClass !== CLASS.UNIVERSAL || tlv.constructed || (tlv.tag !== 23 && tlv.tag !== 24))
    throw bad(what, 'expected UTCTime or GeneralizedTime');
  const text = tlv.content.toString('latin1');
  const m = (
    tlv.tag === 23 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/ : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/
  ).exec(text);
  if (!m) throw bad(what, 'malformed time');
  let year = Number(m[1]);
  if (tlv.tag === 23) year += year < 50 ? 2000 : 1900;
  const ms = Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (Number.isNaN(ms)) throw bad(what, 'malformed time');
  return new Date(ms);
}
