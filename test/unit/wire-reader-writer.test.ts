import { expect } from 'chai';
import { readStringMapEntry } from '../../proto/wire/codec.js';
import { ProtobufDecodeError, ProtoReader } from '../../proto/wire/reader.js';
import { ProtoWriter } from '../../proto/wire/writer.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s/g, ''), 'hex');

function written(write: (w: ProtoWriter) => void, capacity?: number): Buffer {
  const w = new ProtoWriter(capacity);
  write(w);
  return w.finish();
}

/** What reading `b` with `read` gives, or the error message it throws. */
function readOrError<T>(b: Uint8Array, read: (r: ProtoReader) => T): T | string {
  try {
    return read(new ProtoReader(b, 'test.Message'));
  } catch (err) {
    if (err instanceof ProtobufDecodeError) return `error: ${err.message}`;
    throw err;
  }
}

describe('proto/wire: the protobuf wire writer and reader', () => {
  // Encodings from the protobuf encoding guide and Go's protowire.
  const varints: [number, string][] = [
    [0, '00'], [1, '01'], [127, '7f'], [128, '8001'], [300, 'ac02'], [16383, 'ff7f'], [16384, '808001'],
    [2 ** 31 - 1, 'ffffffff07'], [2 ** 31, '8080808008'], [2 ** 32, '8080808010'], [2 ** 53 - 1, 'ffffffffffffff0f'],
  ];
  for (const [value, encoding] of varints) {
    it(`writes and reads the varint ${value} as ${encoding}`, () => {
      const b = written((w) => w.varint(value));
      expect(hex(b)).to.equal(encoding);
      expect(new ProtoReader(b, 't').varint()).to.equal(value);
    });
  }

  const int32s: [number, string][] = [
    [0, '00'], [1, '01'], [-1, 'ffffffffffffffffff01'], [2 ** 31 - 1, 'ffffffff07'], [-(2 ** 31), '80808080f8ffffffff01'], [-2, 'feffffffffffffffff01'],
  ];
  for (const [value, encoding] of int32s) {
    it(`writes the int32 ${value} sign-extended (${encoding}) and reads it back`, () => {
      const b = written((w) => w.int32(value));
      expect(hex(b)).to.equal(encoding);
      expect(new ProtoReader(b, 't').int32()).to.equal(value);
    });
  }

  it('reads an int32 from the low 32 bits of a longer varint, as Go and protobufjs truncate', () => {
    expect(new ProtoReader(bytes('8080808010'), 't').int32()).to.equal(0); // 2^32
    expect(new ProtoReader(bytes('ffffffff0f'), 't').int32()).to.equal(-1); // 2^32-1 in 5 bytes
  });

  const int64s: [string, number][] = [
    ['00', 0], ['01', 1], ['ffffffffffffffffff01', -1], ['ffffffffffffff0f', 2 ** 53 - 1],
    ['8180808080808010', 2 ** 53], // 2^53 + 1 rounds to 2^53, as Long#toNumber does
    ['ffffffffffffffff7f', 2 ** 63], // 2^63 - 1 rounds up
    ['80808080808080808001', -(2 ** 63)], ['8080808010', 2 ** 32], ['feffffffffffffffff01', -2],
  ];
  for (const [encoding, value] of int64s) {
    it(`reads the int64 ${encoding} as ${value}`, () => {
      expect(new ProtoReader(bytes(encoding), 't').int64()).to.equal(value);
    });
  }

  it('writes int64 fields from numbers, decimal strings and Long-like objects, saturating numbers as Long does', () => {
    const cases: [number | string | { low: number; high: number }, string][] = [
      [0, ''], ['0', ''], [5, '0805'], [-1, '08ffffffffffffffffff01'], ['-1', '08ffffffffffffffffff01'], [1.9, '0801'], [-1.9, '08ffffffffffffffffff01'],
      ['9223372036854775807', '08ffffffffffffffff7f'], [2 ** 64, '08ffffffffffffffff7f'], [-(2 ** 64), '0880808080808080808001'],
      ['9223372036854775808', '0880808080808080808001'], // wraps, as Long.fromString does
      [Number.NaN, ''], [{ low: -1, high: 0 }, '08ffffffff0f'], [{ low: 0, high: 1 }, '088080808010'],
    ];
    for (const [value, encoding] of cases) expect(hex(written((w) => w.int64Field(0x08, value, 'f'))), String(value)).to.equal(encoding);
    expect(() => written((w) => w.int64Field(0x08, '12abc', 'csi.v1.X.y'))).to.throw(TypeError, 'csi.v1.X.y: "12abc" is not a decimal integer');
  });

  it('writes a bool as 0/1 and reads any non-zero varint as true', () => {
    expect(hex(written((w) => { w.boolField(0x30, true); w.boolField(0x30, false); }))).to.equal('3001');
    expect(new ProtoReader(bytes('8080808010'), 't').bool()).to.equal(true);
    expect(new ProtoReader(bytes('00'), 't').bool()).to.equal(false);
  });

  const strings = ['', 'a', 'x'.repeat(42), 'x'.repeat(43), 'é', 'é'.repeat(42), 'é'.repeat(64), '😀', 'a😀b'.repeat(30), '\0', 'x'.repeat(70000)];
  for (const s of strings) {
    it(`writes and reads the string ${JSON.stringify(s.slice(0, 12))} (${s.length} units) as UTF-8 with a varint length`, () => {
      const b = written((w) => w.string(s), 1);
      const utf8 = Buffer.from(s, 'utf8');
      expect(hex(b)).to.equal(hex(Buffer.concat([written((w) => w.varint(utf8.length)), utf8])));
      expect(new ProtoReader(b, 't').string()).to.equal(s);
    });
  }

  it('writes a lone surrogate as U+FFFD so the bytes are valid UTF-8 (Go rejects anything else)', () => {
    expect(hex(written((w) => w.string('a\ud800b')))).to.equal('0561efbfbd62');
    expect(hex(written((w) => w.string(`${'x'.repeat(50)}\udc00`)))).to.equal(`35${'78'.repeat(50)}efbfbd`);
  });

  it('decodes invalid UTF-8 with U+FFFD per bad sequence, as Node (and so protobufjs) does, short and long', () => {
    for (const raw of ['ff', 'c328', 'eda080', 'f09f98', '41ff42', `${'41'.repeat(40)}ff`]) {
      const b = Buffer.concat([written((w) => w.varint(raw.length / 2)), bytes(raw)]);
      expect(new ProtoReader(b, 't').string(), raw).to.equal(bytes(raw).toString('utf8'));
    }
  });

  it('writes sub-messages whose length needs 1, 2 and 3 bytes, nested, through buffer growth', () => {
    const body = (n: number) => 'y'.repeat(n);
    const b = written((w) => {
      w.varint(0x0a);
      const outer = w.fork();
      for (const n of [5, 200, 20000]) w.messageField(0x12, n, (w2, len: number) => w2.stringField(0x0a, body(len)));
      w.join(outer);
    }, 1);
    const r = new ProtoReader(b, 't');
    expect(r.tag()).to.equal(0x0a);
    const outer = r.enter();
    const seen: number[] = [];
    while (r.more()) {
      expect(r.tag()).to.equal(0x12);
      r.message(seen, (r2, into) => { expect(r2.tag()).to.equal(0x0a); into.push(r2.string().length); });
    }
    r.leave(outer);
    expect(seen).to.deep.equal([5, 200, 20000]);
    expect(r.more()).to.equal(false);
  });

  it('hands out a copy: the buffer it keeps for the next encode does not change an earlier message', () => {
    const first = new ProtoWriter();
    first.stringField(0x0a, 'first');
    const a = first.finish();
    const second = new ProtoWriter();
    second.stringField(0x0a, 'overwritten?');
    second.finish();
    expect(hex(a)).to.equal('0a056669727374');
  });

  it('gives an encode nested in another (a value whose toString encodes) its own buffer', () => {
    const nested = { toString: () => { const inner = new ProtoWriter(); inner.stringField(0x0a, 'in'); return hex(inner.finish()); } };
    const outer = new ProtoWriter();
    outer.stringField(0x0a, 'a');
    outer.stringField(0x12, nested as unknown as string);
    outer.stringField(0x1a, 'b');
    expect(hex(outer.finish())).to.equal(`0a0161 1208${hex(Buffer.from('0a02696e'))} 1a0162`.replace(/ /g, ''));
  });

  it('reads bytes as a view and accepts a Uint8Array that is not a Buffer, at an offset', () => {
    const backing = new Uint8Array([9, 9, 3, 1, 2, 3, 9]);
    const r = new ProtoReader(backing.subarray(2, 6), 't');
    const b = r.bytes();
    expect(Buffer.isBuffer(b)).to.equal(true);
    expect([...b]).to.deep.equal([1, 2, 3]);
    backing[3] = 7;
    expect(b[0]).to.equal(7);
  });

  it('skips unknown fields of wire types 0, 1, 2 and 5', () => {
    const b = bytes('08 96 01  11 0102030405060708  1a 03 616263  25 01020304  2a 01 7a');
    const r = new ProtoReader(b, 't');
    for (const tag of [0x08, 0x11, 0x1a, 0x25]) { expect(r.tag()).to.equal(tag); r.skip(tag); }
    expect(r.tag()).to.equal(0x2a);
    expect(r.string()).to.equal('z');
  });

  const malformed: [string, string, (r: ProtoReader) => unknown, string][] = [
    ['a truncated varint', '0a', (r) => { r.tag(); return r.string(); }, 'truncated varint in field 1 at byte 1'],
    ['a truncated tag', '80', (r) => r.tag(), 'truncated varint at byte 0'],
    ['a varint of 11 bytes', '8080808080808080808001', (r) => r.varint(), 'varint longer than 10 bytes at byte 0'],
    ['a 10-byte varint over 64 bits', '80808080808080808002', (r) => r.int64(), 'varint overflows 64 bits at byte 0'],
    ['a 10-byte int32 over 64 bits', 'ffffffffffffffffff7f', (r) => r.int32(), 'varint overflows 64 bits at byte 0'],
    ['a length past the end', '0a 05 4142', (r) => { r.tag(); return r.string(); }, 'length 5 past the end in field 1 at byte 2'],
    ['a length past the end of the enclosing sub-message', '0a 02 0a 05 41424344', (r) => { r.tag(); r.enter(); r.tag(); return r.string(); }, 'length 5 past the end in field 1 at byte 4'],
    ['a truncated fixed64', '09 01020304', (r) => r.skip(r.tag()), 'truncated fixed64 value in field 1 at byte 1'],
    ['a truncated fixed32', '65 0102', (r) => r.skip(r.tag()), 'truncated fixed32 value in field 12 at byte 1'],
    ['a group start (wire type 3)', '3b', (r) => r.skip(r.tag()), 'group (wire type 3) not supported in field 7 at byte 1'],
    ['a group end (wire type 4)', '3c', (r) => r.skip(r.tag()), 'group (wire type 4) not supported in field 7 at byte 1'],
    ['wire type 6', '0e', (r) => r.skip(r.tag()), 'invalid wire type 6 in field 1 at byte 1'],
    ['wire type 7', '0f', (r) => r.skip(r.tag()), 'invalid wire type 7 in field 1 at byte 1'],
    ['field number 0', '02 00', (r) => r.tag(), 'invalid field number 0 at byte 1'],
    ['a field number over 2^29-1', '8080808010', (r) => r.tag(), 'invalid field number 536870912 at byte 5'],
  ];
  for (const [name, input, read, message] of malformed) {
    it(`refuses ${name} with a ProtobufDecodeError naming the type, field and offset`, () => {
      expect(readOrError(bytes(input), read)).to.equal(`error: test.Message: ${message}`);
    });
  }

  it('reads map entries: a missing key or value is "", a later key wins, unknown fields are skipped', () => {
    const map: Record<string, string> = {};
    const entries = bytes('0a 00  0a 03 0a016b  0a 03 120176  0a 06 0a016b 120131  0a 08 0a016b 2001 120132');
    const r = new ProtoReader(entries, 't');
    while (r.more()) { expect(r.tag()).to.equal(0x0a); readStringMapEntry(r, map); }
    expect(map).to.deep.equal({ '': 'v', k: '2' });
  });

  it('keeps "__proto__" and "constructor" map keys as own keys without touching any prototype', () => {
    const map: Record<string, string> = {};
    const entry = (k: string, v: string): Buffer => written((w) => w.stringMap(0x0a, { [k]: v }, 'f'));
    const r = new ProtoReader(Buffer.concat([entry('__proto__', 'x'), entry('constructor', 'y'), entry('toString', 'z')]), 't');
    while (r.more()) { r.tag(); readStringMapEntry(r, map); }
    expect(Object.getPrototypeOf(map)).to.equal(Object.prototype);
    expect(Object.keys(map)).to.deep.equal(['__proto__', 'constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(map, '__proto__')?.value).to.equal('x');
    expect(typeof Object.prototype.toString).to.equal('function');
  });

  it('writes map entries with key and value, empty ones included, and own "__proto__" keys', () => {
    const map = JSON.parse('{"__proto__":"p","":""}') as Record<string, string>;
    expect(hex(written((w) => w.stringMap(0x12, map, 'f')))).to.equal('120e0a095f5f70726f746f5f5f120170' + '12040a001200');
  });

  it('names the field when an encoder is given the wrong shape', () => {
    expect(() => written((w) => w.repeatedStrings(0x12, 'ro' as unknown as string[], 'csi.v1.X.mount_flags'))).to.throw(TypeError, 'csi.v1.X.mount_flags: array expected');
    expect(() => written((w) => w.stringMap(0x12, 'a' as unknown as Record<string, string>, 'csi.v1.X.secrets'))).to.throw(TypeError, 'csi.v1.X.secrets: object expected');
    expect(() => written((w) => w.repeatedMessages(0x0a, [null] as unknown as object[], () => undefined, 'v1alpha1.X.files'))).to.throw(TypeError, 'v1alpha1.X.files: an element is null');
  });
});
