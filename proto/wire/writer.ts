/**
 * Writes protobuf wire format for the hand-written codecs of this folder. proto3: a scalar
 * equal to its default is not written (as Go's encoder does; protobufjs writes whatever the
 * caller set), sub-messages and map entries always are. Values are coerced the way
 * protobufjs's fromObject did for our callers (String(), `| 0`, Boolean()).
 */
import type { EnumType } from './codec.js';

/** What an int64 field accepts: the generated input type (`number | string | Long`). */
export type Int64Input = number | string | { readonly low: number; readonly high: number };

const TWO_63 = 2 ** 63;

/** Strings up to this many UTF-16 units are encoded in JS when ASCII (≤ 126 bytes: one length byte). */
const ASCII_FAST_PATH_UNITS = 42;

/**
 * Node's UTF-8 encoder without Buffer#write's argument handling (what protobufjs calls),
 * Buffer#write where it is missing. Lone surrogates become U+FFFD either way.
 */
const utf8Write: (buf: Buffer, value: string, offset: number) => number =
  typeof (Buffer.prototype as { utf8Write?: unknown }).utf8Write === 'function'
    ? (buf, value, offset) => (buf as Buffer & { utf8Write(s: string, offset: number, length: number): number }).utf8Write(value, offset, buf.length - offset)
    : (buf, value, offset) => buf.write(value, offset, 'utf8');

/** Bytes of an unsigned varint below 2^53. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) { value = Math.floor(value / 128); size++; }
  return size;
}

/**
 * An int64 as its 64-bit two's complement, the way protobufjs (Long.fromValue) takes it:
 * numbers truncated toward zero, saturating at ±2^63, NaN as 0; decimal strings wrap.
 */
function int64Bits(value: Int64Input, field: string): bigint {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 0n;
    if (value >= TWO_63) return 2n ** 63n - 1n;
    if (value <= -TWO_63) return BigInt.asUintN(64, -(2n ** 63n));
    return BigInt.asUintN(64, BigInt(Math.trunc(value)));
  }
  if (typeof value === 'string') {
    if (!/^-?\d+$/.test(value)) throw new TypeError(`${field}: "${value.slice(0, 32)}" is not a decimal integer`);
    return BigInt.asUintN(64, BigInt(value));
  }
  if (typeof value === 'object' && value !== null && typeof value.low === 'number' && typeof value.high === 'number') {
    return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  }
  throw new TypeError(`${field}: int64 expected`);
}

/**
 * The working buffer of the last encode, kept for the next one: growing a fresh buffer
 * cost a third of encoding a kubelet-sized request. A writer takes it (so an encode
 * nested in another gets its own) and finish() gives it back unless it grew past
 * MAX_SCRATCH_BYTES.
 */
let scratch: Buffer | undefined;
const MAX_SCRATCH_BYTES = 64 * 1024;

/** A growing buffer the codecs write one message into; finish() returns the bytes. */
export class ProtoWriter {
  private buf: Buffer;
  private pos = 0;

  /** `capacity` sets the first buffer's size; without it the kept scratch buffer is used. */
  constructor(capacity?: number) {
    // allocUnsafe and reuse: every byte below `pos` is written before finish() copies it out.
    if (capacity === undefined && scratch !== undefined) {
      this.buf = scratch;
      scratch = undefined;
    } else this.buf = Buffer.allocUnsafe(capacity ?? 1024);
  }

  /** The message written: a copy of exactly its size (a large one is handed over without copying). */
  finish(): Buffer {
    if (this.buf.length > MAX_SCRATCH_BYTES) return this.buf.subarray(0, this.pos);
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    scratch = this.buf;
    return out;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** An unsigned varint below 2^53 (tags, lengths, non-negative int32/int64 values). */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    while (value > 0x7fffffff) {
      buf[pos++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    while (value >= 128) {
      buf[pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[pos++] = value;
    this.pos = pos;
  }

  private varint64(bits: bigint): void {
    if (bits < 2n ** 53n) { this.varint(Number(bits)); return; }
    this.ensure(10);
    while (bits >= 128n) {
      this.buf[this.pos++] = Number(bits & 0x7fn) | 0x80;
      bits >>= 7n;
    }
    this.buf[this.pos++] = Number(bits);
  }

  /** An int32 value: negatives are sign-extended to 64 bits (10 bytes), as the wire format says. */
  int32(value: number): void {
    if (value >= 0) this.varint(value);
    else this.varint64(BigInt.asUintN(64, BigInt(value)));
  }

  /** Reserves the length of a sub-message written next; join() fills it in. */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the sub-message begun at fork(), moving it when the length needs more than one byte. */
  join(at: number): void {
    const length = this.pos - at - 1;
    if (length < 128) { this.buf[at] = length; return; }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    const end = this.pos + extra;
    this.pos = at;
    this.varint(length);
    this.pos = end;
  }

  /** A string value, length first. Lone surrogates become U+FFFD (Node's encoder), so the bytes are valid UTF-8 that Go accepts. */
  string(value: string): void {
    const units = value.length;
    if (units <= ASCII_FAST_PATH_UNITS) {
      this.ensure(1 + 3 * units);
      const buf = this.buf;
      const start = this.pos + 1;
      let i = 0;
      for (; i < units; i++) {
        const unit = value.charCodeAt(i);
        if (unit >= 0x80) break;
        buf[start + i] = unit;
      }
      const length = i === units ? units : utf8Write(buf, value, start);
      buf[this.pos] = length;
      this.pos = start + length;
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.varint(length);
    this.ensure(length);
    this.pos += utf8Write(this.buf, value, this.pos);
  }

  /** A bytes value, length first. */
  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** A string field, unless empty. */
  stringField(tag: number, value: string | null | undefined): void {
    if (value == null || value === '') return;
    this.varint(tag);
    this.string(typeof value === 'string' ? value : String(value));
  }

  /** A bool field, unless false. */
  boolField(tag: number, value: boolean | null | undefined): void {
    if (!value) return;
    this.varint(tag);
    this.varint(1);
  }

  /** An int32 field, unless 0. */
  int32Field(tag: number, value: number | null | undefined): void {
    const v = (value ?? 0) | 0;
    if (v === 0) return;
    this.varint(tag);
    this.int32(v);
  }

  /** An int64 field, unless 0; `field` names it in errors. */
  int64Field(tag: number, value: Int64Input | null | undefined, field: string): void {
    if (value == null || value === 0) return;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) {
      this.varint(tag);
      this.varint(value);
      return;
    }
    const bits = int64Bits(value, field);
    if (bits === 0n) return;
    this.varint(tag);
    this.varint64(bits);
  }

  /** An enum field given by name or number, unless 0; an unknown name is a TypeError naming the field. */
  enumField(tag: number, value: string | number | null | undefined, type: EnumType, field: string): void {
    if (value == null) return;
    const number = typeof value === 'number' ? value | 0 : type.numberOf(value);
    if (number === undefined) throw new TypeError(`${field}: "${String(value).slice(0, 64)}" is not a ${type.name} value`);
    if (number === 0) return;
    this.varint(tag);
    this.int32(number);
  }

  /** A bytes field (a base64 string is decoded, as protobufjs did), unless empty. */
  bytesField(tag: number, value: Uint8Array | string | null | undefined): void {
    if (value == null) return;
    const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : value;
    if (bytes.length === 0) return;
    this.varint(tag);
    this.bytes(bytes);
  }

  /** A sub-message field, written (even when empty) unless null or absent. */
  messageField<T>(tag: number, value: T | null | undefined, write: (w: ProtoWriter, m: T) => void): void {
    if (value == null) return;
    this.varint(tag);
    const at = this.fork();
    write(this, value);
    this.join(at);
  }

  /** A repeated sub-message field: one field per element. */
  repeatedMessages<T>(tag: number, values: readonly T[] | null | undefined, write: (w: ProtoWriter, m: T) => void, field: string): void {
    if (values == null) return;
    if (!Array.isArray(values)) throw new TypeError(`${field}: array expected`);
    for (const value of values) {
      if (value == null) throw new TypeError(`${field}: an element is ${String(value)}`);
      this.messageField(tag, value, write);
    }
  }

  /** A repeated string field: one field per element, empty strings included. */
  repeatedStrings(tag: number, values: readonly string[] | null | undefined, field: string): void {
    if (values == null) return;
    if (!Array.isArray(values)) throw new TypeError(`${field}: array expected`);
    for (const value of values) {
      this.varint(tag);
      this.string(typeof value === 'string' ? value : String(value));
    }
  }

  /** A map<string, string> field: one entry per own key, key and value always written (as Go and protobufjs). */
  stringMap(tag: number, map: { readonly [key: string]: string } | null | undefined, field: string): void {
    if (map == null) return;
    if (typeof map !== 'object') throw new TypeError(`${field}: object expected`);
    for (const key of Object.keys(map)) {
      const value = map[key];
      this.varint(tag);
      const at = this.fork();
      this.varint(0x0a);
      this.string(key);
      this.varint(0x12);
      this.string(typeof value === 'string' ? value : String(value));
      this.join(at);
    }
  }
}
