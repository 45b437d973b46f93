/**
 * Codecs of the provider API v1alpha1.CSIDriverProvider (proto/provider/service.proto):
 * the driver encodes MountRequest and decodes MountResponse (paced, see
 * driver/provider-client/mount-response-decoder.ts); providers do the reverse.
 */
import type { Error as MountError, Error__Output as MountError__Output } from '../gen/v1alpha1/Error.js';
import type { File, File__Output } from '../gen/v1alpha1/File.js';
import type { MountRequest, MountRequest__Output } from '../gen/v1alpha1/MountRequest.js';
import type { MountResponse, MountResponse__Output } from '../gen/v1alpha1/MountResponse.js';
import type { ObjectVersion, ObjectVersion__Output } from '../gen/v1alpha1/ObjectVersion.js';
import type { VersionRequest, VersionRequest__Output } from '../gen/v1alpha1/VersionRequest.js';
import type { VersionResponse, VersionResponse__Output } from '../gen/v1alpha1/VersionResponse.js';
import { wireCodec, type WireCodec, type WireMethod } from './codec.js';
import type { ProtoReader } from './reader.js';
import type { ProtoWriter } from './writer.js';

// Tags (field << 3 | wire type) used below: 0x0a = 1/LEN, 0x10 = 2/VARINT, 0x12 = 2/LEN,
// 0x1a = 3/LEN, 0x22 = 4/LEN, 0x2a = 5/LEN.

function readVersionRequest(r: ProtoReader, m: VersionRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.version = r.string();
    else r.skip(tag);
  }
}

function readVersionResponse(r: ProtoReader, m: VersionResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.version = r.string(); break;
      case 0x12: m.runtime_name = r.string(); break;
      case 0x1a: m.runtime_version = r.string(); break;
      default: r.skip(tag);
    }
  }
}

/** A fresh ObjectVersion with its defaults. */
export function newObjectVersion(): ObjectVersion__Output {
  return { id: '', version: '' };
}

/** Reads ObjectVersion { string id = 1; string version = 2; }. */
export function readObjectVersion(r: ProtoReader, m: ObjectVersion__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.id = r.string();
    else if (tag === 0x12) m.version = r.string();
    else r.skip(tag);
  }
}

function writeObjectVersion(w: ProtoWriter, m: ObjectVersion): void {
  w.stringField(0x0a, m.id);
  w.stringField(0x12, m.version);
}

const EMPTY_CONTENTS = Buffer.alloc(0);

/** A fresh File with its defaults (empty contents are one shared zero-length Buffer). */
export function newFile(): File__Output {
  return { path: '', mode: 0, contents: EMPTY_CONTENTS };
}

/** Reads File { string path = 1; int32 mode = 2; bytes contents = 3; }; contents are a view into the response. */
export function readFile(r: ProtoReader, m: File__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.path = r.string(); break;
      case 0x10: m.mode = r.int32(); break;
      case 0x1a: m.contents = r.bytes(); break;
      default: r.skip(tag);
    }
  }
}

function writeFile(w: ProtoWriter, m: File): void {
  w.stringField(0x0a, m.path);
  w.int32Field(0x10, m.mode);
  w.bytesField(0x1a, m.contents);
}

/** Reads Error { string code = 1; } (a second Error field merges into the first: a later code wins). */
export function readMountError(r: ProtoReader, m: MountError__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.code = r.string();
    else r.skip(tag);
  }
}

function writeMountError(w: ProtoWriter, m: MountError): void {
  w.stringField(0x0a, m.code);
}

function readMountRequest(r: ProtoReader, m: MountRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.attributes = r.string(); break;
      case 0x12: m.secrets = r.string(); break;
      case 0x1a: m.target_path = r.string(); break;
      case 0x22: m.permission = r.string(); break;
      case 0x2a: m.current_object_version.push(r.message(newObjectVersion(), readObjectVersion)); break;
      default: r.skip(tag);
    }
  }
}

function writeMountRequest(w: ProtoWriter, m: MountRequest): void {
  w.stringField(0x0a, m.attributes);
  w.stringField(0x12, m.secrets);
  w.stringField(0x1a, m.target_path);
  w.stringField(0x22, m.permission);
  w.repeatedMessages(0x2a, m.current_object_version, writeObjectVersion, 'v1alpha1.MountRequest.current_object_version');
}

/**
 * Reads MountResponse { repeated ObjectVersion object_version = 1; Error error = 2;
 * repeated File files = 3; } in one go: what providers' tests and tools use. The driver
 * decodes with decodeMountResponse instead, which paces and limits.
 */
function readMountResponse(r: ProtoReader, m: MountResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.object_version.push(r.message(newObjectVersion(), readObjectVersion)); break;
      case 0x12: m.error = r.message(m.error ?? { code: '' }, readMountError); break;
      case 0x1a: m.files.push(r.message(newFile(), readFile)); break;
      default: r.skip(tag);
    }
  }
}

function writeMountResponse(w: ProtoWriter, m: MountResponse): void {
  w.repeatedMessages(0x0a, m.object_version, writeObjectVersion, 'v1alpha1.MountResponse.object_version');
  w.messageField(0x12, m.error, writeMountError);
  w.repeatedMessages(0x1a, m.files, writeFile, 'v1alpha1.MountResponse.files');
}

/** MountResponse's wire type name, for the paced decoder's errors. */
export const MOUNT_RESPONSE_TYPE = 'v1alpha1.MountResponse';

/** MountResponse: providers encode it; its decode is the unpaced one. */
const MOUNT_RESPONSE: WireCodec<MountResponse, MountResponse__Output> = wireCodec<MountResponse, MountResponse__Output>(
  MOUNT_RESPONSE_TYPE, () => ({ object_version: [], error: null, files: [] }), readMountResponse, writeMountResponse);

/** The v1alpha1.CSIDriverProvider methods, by name. */
export const CSI_PROVIDER = Object.freeze({
  Version: {
    path: '/v1alpha1.CSIDriverProvider/Version',
    request: wireCodec<VersionRequest, VersionRequest__Output>('v1alpha1.VersionRequest', () => ({ version: '' }), readVersionRequest,
      (w, m) => w.stringField(0x0a, m.version)),
    response: wireCodec<VersionResponse, VersionResponse__Output>('v1alpha1.VersionResponse', () => ({ version: '', runtime_name: '', runtime_version: '' }), readVersionResponse,
      (w, m) => { w.stringField(0x0a, m.version); w.stringField(0x12, m.runtime_name); w.stringField(0x1a, m.runtime_version); }),
  } satisfies WireMethod<VersionRequest, VersionRequest__Output, VersionResponse, VersionResponse__Output>,
  Mount: {
    path: '/v1alpha1.CSIDriverProvider/Mount',
    request: wireCodec<MountRequest, MountRequest__Output>('v1alpha1.MountRequest',
      () => ({ attributes: '', secrets: '', target_path: '', permission: '', current_object_version: [] }), readMountRequest, writeMountRequest),
    response: MOUNT_RESPONSE,
  } satisfies WireMethod<MountRequest, MountRequest__Output, MountResponse, MountResponse__Output>,
});
