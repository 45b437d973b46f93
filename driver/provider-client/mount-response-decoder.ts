import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../proto/runtime/errors.js';
import type { Pacer } from '../../proto/runtime/pacer.js';
import { MOUNT_RESPONSE_TYPE, newFile, newObjectVersion, readFile, readMountError, readObjectVersion } from '../../proto/wire/provider.js';
import { ProtobufDecodeError, ProtoReader } from '../../proto/wire/reader.js';

/**
 * Decodes a provider's MountResponse (SPEC 3.2) from its protobuf wire bytes, giving the
 * event loop back every few milliseconds. Decoding a response in one synchronous call held
 * the driver's event loop 300-650 ms for a 4 MiB response of 250,000 tiny files, during
 * which Probe and every other pod's publish waited (issue 9). The top-level loop is paced
 * here; each object version, error and file is read by proto/wire's codec functions.
 * Unknown fields are skipped as protobuf requires, so a newer provider's additions are
 * ignored, never an error. More than `maxObjects` object versions is RESOURCE_EXHAUSTED
 * (`TooManyObjects`), found before they are all decoded; malformed bytes are
 * INVALID_ARGUMENT (`InvalidProviderResponse`).
 *
 *   MountResponse { repeated ObjectVersion object_version = 1; Error error = 2; repeated File files = 3; }
 */
export async function decodeMountResponse(buf: Uint8Array, pacer?: Pacer, maxObjects = Infinity): Promise<MountResponse__Output> {
  const out: MountResponse__Output = { object_version: [], error: null, files: [] };
  const r = new ProtoReader(buf, MOUNT_RESPONSE_TYPE);
  try {
    while (r.more()) {
      const tag = r.tag();
      if (tag === 0x0a) {
        // Checked while decoding: each object becomes a `.metadata` file, and 4 MiB holds
        // ~400,000 short ids, whose files and sorting would cost seconds.
        if (out.object_version.length >= maxObjects) {
          throw new SscError('resource-exhausted', `response has more than ${maxObjects} objects (--max-objects-per-volume)`, { reason: 'TooManyObjects' });
        }
        out.object_version.push(r.message(newObjectVersion(), readObjectVersion));
      } else if (tag === 0x12) out.error = r.message(out.error ?? { code: '' }, readMountError);
      else if (tag === 0x1a) out.files.push(r.message(newFile(), readFile));
      else r.skip(tag);
      if (pacer?.due()) await pacer.pause();
    }
  } catch (err) {
    if (err instanceof ProtobufDecodeError) {
      throw new SscError('invalid-argument', `provider returned a malformed MountResponse (${err.problem})`, { reason: 'InvalidProviderResponse' });
    }
    throw err;
  }
  return out;
}
