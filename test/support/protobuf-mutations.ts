/**
 * Rewrites a valid encoding into other valid encodings of the same message, so a codec
 * can be compared with protobufjs on inputs no encoder of ours produces: fields in reverse
 * order, unknown fields of every wire type at every level, stale earlier copies of scalar
 * fields (the last one wins). It parses the wire format itself, independent of proto/wire.
 */
import { wireTypeOf, type ProtobufOracle } from './protobuf-oracle.js';

/** One field of an encoding: its number and wire type, all its bytes and (wire type 2) its value. */
export interface WireChunk {
  readonly field: number;
  readonly wireType: number;
  readonly bytes: Buffer;
  readonly body?: Buffer;
}

function varint(value: number): Buffer {
  const out: number[] = [];
  while (value >= 128) { out.push((value % 128) | 0x80); value = Math.floor(value / 128); }
  out.push(value);
  return Buffer.from(out);
}

function readVarint(b: Buffer, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = b[pos++];
    if (byte === undefined) throw new Error('truncated varint in test input');
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
}

/** The top-level fields of a valid encoding, in order. */
export function splitFields(b: Buffer): WireChunk[] {
  const chunks: WireChunk[] = [];
  let pos = 0;
  while (pos < b.length) {
    const start = pos;
    const [tag, afterTag] = readVarint(b, pos);
    const wireType = tag % 8;
    let body: Buffer | undefined;
    if (wireType === 0) pos = readVarint(b, afterTag)[1];
    else if (wireType === 1) pos = afterTag + 8;
    else if (wireType === 5) pos = afterTag + 4;
    else if (wireType === 2) {
      const [length, afterLength] = readVarint(b, afterTag);
      pos = afterLength + length;
      body = b.subarray(afterLength, pos);
    } else throw new Error(`wire type ${wireType} in test input`);
    chunks.push({ field: Math.floor(tag / 8), wireType, bytes: b.subarray(start, pos), ...(body ? { body } : {}) });
  }
  return chunks;
}

/** The offsets where a top-level field ends (0 included): the only cuts that leave a valid message. */
export function fieldBoundaries(b: Buffer): Set<number> {
  const ends = new Set([0]);
  let at = 0;
  for (const c of splitFields(b)) ends.add(at += c.bytes.length);
  return ends;
}

function field(number: number, wireType: number, value: Buffer): Buffer {
  return Buffer.concat([varint(number * 8 + wireType), wireType === 2 ? varint(value.length) : Buffer.alloc(0), value]);
}

/** Unknown fields (numbers no message of ours uses) of wire types 0, 1, 2 and 5. */
export const UNKNOWN_FIELDS = Buffer.concat([
  field(900, 0, Buffer.from([0x96, 0x01])),
  field(901, 1, Buffer.from([1, 2, 3, 4, 5, 6, 7, 8])),
  field(902, 2, Buffer.from('future field')),
  field(903, 5, Buffer.from([1, 2, 3, 4])),
  field(536870911, 0, Buffer.from([0x7f])),
]);

/** How to rewrite an encoding. */
export type Mutation = 'reverse' | 'unknown-fields' | 'stale-duplicates';

/**
 * `b` (a valid encoding of message `typeName`) rewritten by `how`, recursively inside every
 * sub-message and map entry. 'stale-duplicates' puts before each non-repeated scalar field
 * an earlier copy with another value; both decoders must keep the later one.
 */
export function mutate(oracle: ProtobufOracle, typeName: string, b: Buffer, how: Mutation): Buffer {
  const d = oracle.message(typeName);
  const parts: Buffer[] = [];
  if (how === 'unknown-fields') parts.push(UNKNOWN_FIELDS);
  for (const chunk of splitFields(b)) {
    const f = d.field.find((x) => x.number === chunk.field && wireTypeOf(x) === chunk.wireType);
    const nested = f ? oracle.fieldMessage(typeName, f) : undefined;
    let bytes = chunk.bytes;
    if (nested !== undefined && chunk.body) bytes = field(chunk.field, 2, mutate(oracle, nested, chunk.body, how));
    if (how === 'stale-duplicates' && f && nested === undefined && f.label !== 'LABEL_REPEATED') {
      parts.push(field(chunk.field, chunk.wireType, chunk.wireType === 2 ? Buffer.from('stale') : Buffer.from([0x07])));
    }
    parts.push(bytes);
    if (how === 'unknown-fields') parts.push(UNKNOWN_FIELDS);
  }
  if (how === 'reverse') parts.reverse();
  return Buffer.concat(parts);
}
