/**
 * Reads protobuf wire format (https://protobuf.dev/programming-guides/encoding/) for the
 * hand-written codecs of this folder. It replaces protobufjs at runtime (issue 15: it and
 * grpc-js cost ~12 MiB of RSS and much CPU per call). Rules, as Go's protobuf runtime:
 * a known field number with an unexpected wire type is skipped like an unknown field;
 * groups (wire types 3/4), field number 0, varints over 10 bytes or 64 bits, and
 * lengths or fixed-size values running past their message are errors. No field of our two
 * protos is a packable repeated scalar (repeated fields are strings and messages), so
 * there is no packed-array reading to accept.
 */

/** Bytes that are not a well-formed message of `typeName`: `problem` says what and where. */
export class ProtobufDecodeError extends Error {
  constructor(readonly typeName: string, readonly problem: string) {
    super(`${typeName}: ${problem}`);
    this.name = 'ProtobufDecodeError';
  }
}

// Wire types (the low 3 bits of a tag).
const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

/** Field numbers are 1..2^29-1 (protobuf language guide). */
const MAX_FIELD_NUMBER = 2 ** 29 - 1;

/**
 * Node's UTF-8 decoder without Buffer#toString's argument handling (measured: ~60% of the
 * time of toString on CSI-sized strings, faster than decoding ASCII in JS too). It is
 * what protobufjs calls; toString is the fallback where it is missing.
 */
const utf8Slice: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as { utf8Slice?: unknown }).utf8Slice === 'function'
    ? (buf, start, end) => (buf as Buffer & { utf8Slice(start: number, end: number): string }).utf8Slice(start, end)
    : (buf, start, end) => buf.toString('utf8', start, end);

/**
 * A cursor over one message's bytes. `limit` narrows to the length-delimited field being
 * read (enter/leave), so nothing inside a sub-message can read past its end.
 */
export class ProtoReader {
  private readonly buf: Buffer;
  private pos = 0;
  private limit: number;
  /** The field number of the last tag read, for error messages. */
  private field = 0;

  constructor(bytes: Uint8Array, private readonly typeName: string) {
    // A Buffer view (no copy) so strings decode with Node's UTF-8 decoder, as protobufjs does.
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.limit = this.buf.length;
  }

  /** True while the current message has bytes left. */
  more(): boolean {
    return this.pos < this.limit;
  }

  /** An error naming this message type, the field being read and the byte offset. */
  fail(what: string): ProtobufDecodeError {
    const where = this.field === 0 ? `at byte ${this.pos}` : `in field ${this.field} at byte ${this.pos}`;
    return new ProtobufDecodeError(this.typeName, `${what} ${where}`);
  }

  /** The next tag, `field << 3 | wireType`; decoders switch on it and skip() what they do not know. */
  tag(): number {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field < 1 || field > MAX_FIELD_NUMBER) throw this.fail(`invalid field number ${field}`);
    this.field = field;
    return tag;
  }

  /** An unsigned varint as a number (exact below 2^53: lengths, tags, unknown values). */
  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos >= this.limit) throw this.fail('truncated varint');
    let byte = buf[pos++] as number;
    if (byte < 0x80) { this.pos = pos; return byte; }
    let value = byte & 0x7f;
    let scale = 128;
    for (let i = 1; i < 10; i++) {
      if (pos >= this.limit) throw this.fail('truncated varint');
      byte = buf[pos++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (i === 9 && byte > 1) throw this.fail('varint overflows 64 bits');
        this.pos = pos;
        return value;
      }
      scale *= 128;
    }
    throw this.fail('varint longer than 10 bytes');
  }

  /** An int32 (or enum) field: the low 32 bits of the varint, signed; negatives take 10 bytes. */
  int32(): number {
    const buf = this.buf;
    let pos = this.pos;
    let low = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= this.limit) throw this.fail('truncated varint');
      const byte = buf[pos++] as number;
      if (i < 5) low |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        if (i === 9 && byte > 1) throw this.fail('varint overflows 64 bits');
        this.pos = pos;
        return low | 0;
      }
    }
    throw this.fail('varint longer than 10 bytes');
  }

  /**
   * An int64 field as a JS number the way proto-loader's `longs: Number` gives it
   * (Long#toNumber: high * 2^32 + unsigned low, so beyond 2^53 it rounds).
   */
  int64(): number {
    const buf = this.buf;
    let pos = this.pos;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= this.limit) throw this.fail('truncated varint');
      const byte = buf[pos++] as number;
      const bits = byte & 0x7f;
      if (i < 4) low |= bits << (7 * i);
      else if (i === 4) { low |= bits << 28; high = bits >>> 4; }
      else high |= bits << (7 * i - 32);
      if (byte < 0x80) {
        if (i === 9 && byte > 1) throw this.fail('varint overflows 64 bits');
        this.pos = pos;
        return (high | 0) * 4294967296 + (low >>> 0);
      }
    }
    throw this.fail('varint longer than 10 bytes');
  }

  /** A bool field: any non-zero varint is true (as Go; a bool is always written as 0 or 1). */
  bool(): boolean {
    return this.varint() !== 0;
  }

  /** The length of a length-delimited field, checked against the bytes its message has left. */
  private length(): number {
    const length = this.varint();
    if (length > this.limit - this.pos) throw this.fail(`length ${length} past the end`);
    return length;
  }

  /**
   * A string field. Invalid UTF-8 becomes U+FFFD per bad sequence, exactly as protobufjs
   * (Node's Buffer decoder) gives it to our callers today. grpc-go instead rejects a
   * proto3 string that is not valid UTF-8, so Go peers never send one.
   */
  string(): string {
    const length = this.length();
    const start = this.pos;
    const end = start + length;
    this.pos = end;
    return utf8Slice(this.buf, start, end);
  }

  /** A bytes field: a view into the message's buffer (no copy), as protobufjs gives on a Buffer. */
  bytes(): Buffer {
    const length = this.length();
    const start = this.pos;
    this.pos = start + length;
    return this.buf.subarray(start, this.pos);
  }

  /** Narrows reading to the length-delimited field that starts here; returns what leave() restores. */
  enter(): number {
    const length = this.length();
    const outer = this.limit;
    this.limit = this.pos + length;
    return outer;
  }

  /** Ends reading a sub-message (its loop has consumed it) and widens back to its parent. */
  leave(outer: number): void {
    this.limit = outer;
  }

  /** Reads the sub-message that starts here into `into` (a repeated field of it merges, as proto3 says). */
  message<T>(into: T, read: (r: ProtoReader, m: T) => void): T {
    const outer = this.enter();
    read(this, into);
    this.leave(outer);
    return into;
  }

  /** Skips the value of a field this decoder does not know (or knows with another wire type). */
  skip(tag: number): void {
    switch (tag & 7) {
      case WIRE_VARINT: this.varint(); return;
      case WIRE_LEN: { const length = this.length(); this.pos += length; return; }
      case WIRE_FIXED64: this.fixed(8); return;
      case WIRE_FIXED32: this.fixed(4); return;
      case 3: case 4: throw this.fail(`group (wire type ${tag & 7}) not supported`);
      default: throw this.fail(`invalid wire type ${tag & 7}`);
    }
  }

  private fixed(size: number): void {
    if (size > this.limit - this.pos) throw this.fail(`truncated fixed${size * 8} value`);
    this.pos += size;
  }
}
