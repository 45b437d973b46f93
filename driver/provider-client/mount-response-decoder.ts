import protobuf from 'protobufjs';
import { join } from 'node:path';
import type { Error__Output } from '../../proto/gen/v1alpha1/Error.js';
import type { File__Output } from '../../proto/gen/v1alpha1/File.js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import type { ObjectVersion__Output } from '../../proto/gen/v1alpha1/ObjectVersion.js';
import { SscError } from '../../lib/errors.js';
import { PROTO_CONVERSION, protoDir } from '../../lib/grpc/grpc-proto.js';
import type { Pacer } from '../../lib/pacer.js';

/** Decodes one element from `reader`'s next `length` bytes, converted as proto-loader converts. */
type ElementDecoder<T> = (reader: protobuf.Reader, length: number) => T;

interface MountResponseElements {
  readonly objectVersion: ElementDecoder<ObjectVersion__Output>;
  readonly error: ElementDecoder<Error__Output>;
  readonly file: ElementDecoder<File__Output>;
}

let elements: MountResponseElements | undefined;

/** protobufjs's decoders of MountResponse's element messages, from the same .proto grpc-js serves. */
function mountResponseElements(): MountResponseElements {
  if (elements) return elements;
  // keepCase, as proto-loader loads the same file (PROTO_CONVERSION): field names as written.
  const root = new protobuf.Root().loadSync(join(protoDir(), 'provider/service.proto'), { keepCase: true });
  const decoder = <T>(name: string): ElementDecoder<T> => {
    const type = root.lookupType(`v1alpha1.${name}`);
    return (reader, length) => type.toObject(type.decode(reader, length), PROTO_CONVERSION) as T;
  };
  elements = { objectVersion: decoder('ObjectVersion'), error: decoder('Error'), file: decoder('File') };
  return elements;
}

/** Protobuf's length-delimited wire type: every MountResponse field is a message. */
const LENGTH_DELIMITED = 2;

/**
 * Decodes a provider's MountResponse from its wire bytes with protobufjs,
 * giving the event loop back every few milliseconds: decoding a 4 MiB response of 100,000
 * small files in one call holds the event loop over 100 ms (bench/README.md, "Decoding a 4 MiB
 * Mount response"), during
 * which Probe and every other pod's publish wait. The top-level loop is protobufjs's
 * Reader, paced here; each object version, error and file is decoded by protobufjs's
 * message type. Unknown fields are skipped, as protobuf requires. More than `maxObjects`
 * object versions is RESOURCE_EXHAUSTED (`TooManyObjects`), found before they are all
 * decoded; malformed bytes are INVALID_ARGUMENT (`InvalidProviderResponse`).
 *
 *   MountResponse { repeated ObjectVersion object_version = 1; Error error = 2; repeated File files = 3; }
 */
export async function decodeMountResponse(
  buf: Uint8Array,
  pacer?: Pacer,
  maxObjects = Infinity,
): Promise<MountResponse__Output> {
  const decode = mountResponseElements();
  const out: MountResponse__Output = { object_version: [], error: null, files: [] };
  // protobufjs's plain Reader, not the BufferReader Reader.create picks for a Buffer: that
  // one cuts a string running past the end short instead of refusing it.
  const reader = new protobuf.Reader(buf);
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const field = tag >>> 3;
      if ((tag & 7) !== LENGTH_DELIMITED || field < 1 || field > 3) {
        reader.skipType(tag & 7);
        continue;
      }
      const length = reader.uint32();
      if (field === 1) {
        // Checked while decoding: each object becomes a `.metadata` file, and 4 MiB holds
        // ~400,000 short ids, whose files and sorting would cost seconds.
        if (out.object_version.length >= maxObjects) {
          throw new SscError(
            'resource-exhausted',
            `response has more than ${maxObjects} objects (--max-objects-per-volume)`,
            { reason: 'TooManyObjects' },
          );
        }
        out.object_version.push(decode.objectVersion(reader, length));
      } else if (field === 2) out.error = decode.error(reader, length);
      else out.files.push(decode.file(reader, length));
      if (pacer?.due()) await pacer.pause();
    }
  } catch (err) {
    if (err instanceof SscError) throw err;
    throw new SscError(
      'invalid-argument',
      `provider returned a malformed MountResponse (${malformation(err)} at byte ${reader.pos} of ${reader.len})`,
      { reason: 'InvalidProviderResponse' },
    );
  }
  return out;
}

/**
 * What protobufjs found wrong, from its own message where that is one of its decoding
 * errors (offsets and wire types only); anything else is not repeated, as it could quote
 * the response's bytes.
 */
function malformation(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  if (/^index out of range/.test(message)) return 'a field runs past the end';
  if (/^invalid wire type \d+/.test(message)) return /^invalid wire type \d+/.exec(message)?.[0] ?? 'invalid wire type';
  if (/^invalid varint encoding/.test(message)) return 'invalid varint encoding';
  return 'undecodable protobuf';
}
