import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../proto/runtime/errors.js';
import type { Pacer } from '../../proto/runtime/pacer.js';

/**
 * Decodes a provider's MountResponse (SPEC 3.2) from its protobuf wire bytes, giving the
 * event loop back every few milliseconds. grpc-js decodes a response in one synchronous
 * call: a 4 MiB response of 250,000 tiny files held the driver's event loop 300-650 ms,
 * during which Probe and every other pod's publish waited (issue 9). The message is small
 * enough to decode by hand; unknown fields are skipped as protobuf requires, so a newer
 * provider's additions are ignored, never an error. More than `maxObjects` object
 * versions is RESOURCE_EXHAUSTED (`TooManyObjects`), found before they are all decoded.
 *
 *   MountResponse { repeated ObjectVersion object_version = 1; Error error = 2; repeated File files = 3; }
 *   ObjectVersion { string id = 1; string version = 2; }   Error { string code = 1; }
 *   File { string path = 1; int32 mode = 2; bytes contents = 3; }
 */
export async function decodeMountResponse(buf: Buffer, pacer?: Pacer, maxObjects = Infinity): Promise<MountResponse__Output> {
  const out: MountResponse__Output = { object_version: [], error: null, files: [] };
  const r = new WireReader(buf, 0, buf.length);
  while (r.more()) {
    const [field, wireType] = r.tag();
    if (wireType !== LEN || field < 1 || field > 3) { r.skip(wireType); continue; }
    const body = r.sub();
    if (field === 1) {
      // Checked while decoding: each object becomes a `.metadata` file, and 4 MiB holds
      // ~400,000 short ids, whose files and sorting would cost seconds.
      if (out.object_version.length >= maxObjects) {
        throw new SscError('resource-exhausted', `response has more than ${maxObjects} objects (--max-objects-per-volume)`, { reason: 'TooManyObjects' });
      }
      out.object_version.push(decodeObjectVersion(body));
    }
    else if (field === 2) out.error = { code: decodeErrorCode(body, out.error?.code ?? '') };
    else out.files.push(decodeFile(body));
    if (pacer?.due()) await pacer.pause();
  }
  return out;
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

function malformed(what: string): SscError {
  return new SscError('invalid-argument', `provider returned a malformed MountResponse (${what})`, { reason: 'InvalidProviderResponse' });
}

function decodeObjectVersion(r: WireReader): { id: string; version: string } {
  const v = { id: '', version: '' };
  while (r.more()) {
    const [field, wireType] = r.tag();
    if (field === 1 && wireType === LEN) v.id = r.string();
    else if (field === 2 && wireType === LEN) v.version = r.string();
    else r.skip(wireType);
  }
  return v;
}

function decodeErrorCode(r: WireReader, code: string): string {
  // A message field seen twice is merged: a later code replaces an earlier one.
  while (r.more()) {
    const [field, wireType] = r.tag();
    if (field === 1 && wireType === LEN) code = r.string();
    else r.skip(wireType);
  }
  return code;
}

function decodeFile(r: WireReader): { path: string; mode: number; contents: Buffer } {
  const f: { path: string; mode: number; contents: Buffer } = { path: '', mode: 0, contents: EMPTY };
  while (r.more()) {
    const [field, wireType] = r.tag();
    if (field === 1 && wireType === LEN) f.path = r.string();
    else if (field === 2 && wireType === VARINT) f.mode = r.int32();
    else if (field === 3 && wireType === LEN) f.contents = r.bytes();
    else r.skip(wireType);
  }
  return f;
}

const EMPTY = Buffer.alloc(0);

/** Reads protobuf wire format from `buf[pos, end)`. */
class WireReader {
  constructor(private readonly buf: Buffer, private pos: number, private readonly end: number) {}

  more(): boolean {
    return this.pos < this.end;
  }

  /** A varint as a number; exact up to 2^53, enough for tags and lengths within 4 MiB. */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw malformed('truncated varint');
      const byte = this.buf[this.pos++] as number;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
    throw malformed('varint longer than 10 bytes');
  }

  /** An int32 field: the low 32 bits of the varint, signed (negative values take 10 bytes). */
  int32(): number {
    let low = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw malformed('truncated varint');
      const byte = this.buf[this.pos++] as number;
      if (i < 5) low |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) return low | 0;
    }
    throw malformed('varint longer than 10 bytes');
  }

  tag(): [number, number] {
    const tag = this.varint();
    return [Math.floor(tag / 8), tag % 8];
  }

  private span(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw malformed('length past the end');
    this.pos = start + length;
    return [start, this.pos];
  }

  sub(): WireReader {
    const [start, end] = this.span();
    return new WireReader(this.buf, start, end);
  }

  string(): string {
    const [start, end] = this.span();
    return this.buf.toString('utf8', start, end);
  }

  /** A view into the response buffer (no copy), as grpc-js's decoder gives. */
  bytes(): Buffer {
    const [start, end] = this.span();
    return this.buf.subarray(start, end);
  }

  skip(wireType: number): void {
    if (wireType === VARINT) this.varint();
    else if (wireType === LEN) this.span();
    else if (wireType === FIXED64 || wireType === FIXED32) {
      const size = wireType === FIXED64 ? 8 : 4;
      if (size > this.end - this.pos) throw malformed('truncated fixed-size field');
      this.pos += size;
    } else throw malformed(`wire type ${wireType}`);
  }
}
