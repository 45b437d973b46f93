/**
 * csi.v1.VolumeCapability, part of NodePublishVolumeRequest (the stage and expand requests,
 * which the driver answers UNIMPLEMENTED, are only skipped). Its `access_type` oneof (block | mount) decodes as proto-loader shows
 * it; when both arrive the last one on the wire wins and the other is cleared (proto3, Go),
 * where protobufjs kept both.
 */
import type {
  VolumeCapability, VolumeCapability__Output, _csi_v1_VolumeCapability_AccessMode as AccessMode,
  _csi_v1_VolumeCapability_AccessMode__Output as AccessMode__Output, _csi_v1_VolumeCapability_MountVolume as MountVolume,
  _csi_v1_VolumeCapability_MountVolume__Output as MountVolume__Output,
} from '../gen/csi/v1/VolumeCapability.js';
import { enumType, readEmpty } from './codec.js';
import type { ProtoReader } from './reader.js';
import type { ProtoWriter } from './writer.js';

const ACCESS_MODE = enumType('csi.v1.VolumeCapability.AccessMode.Mode', [
  'UNKNOWN', 'SINGLE_NODE_WRITER', 'SINGLE_NODE_READER_ONLY', 'MULTI_NODE_READER_ONLY', 'MULTI_NODE_SINGLE_WRITER',
  'MULTI_NODE_MULTI_WRITER', 'SINGLE_NODE_SINGLE_WRITER', 'SINGLE_NODE_MULTI_WRITER',
]);

function readMountVolume(r: ProtoReader, m: MountVolume__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.fs_type = r.string(); break;
      case 0x12: m.mount_flags.push(r.string()); break;
      case 0x1a: m.volume_mount_group = r.string(); break;
      default: r.skip(tag);
    }
  }
}

function readAccessMode(r: ProtoReader, m: AccessMode__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x08) m.mode = ACCESS_MODE.nameOf(r.int32()) as AccessMode__Output['mode'];
    else r.skip(tag);
  }
}

/** A fresh VolumeCapability with its defaults (no access type yet). */
export function newVolumeCapability(): VolumeCapability__Output {
  return { access_mode: null };
}

/** Reads VolumeCapability { oneof access_type { BlockVolume block = 1; MountVolume mount = 2; } AccessMode access_mode = 3; }. */
export function readVolumeCapability(r: ProtoReader, m: VolumeCapability__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a:
        if (m.access_type !== 'block' || !m.block) { delete m.mount; m.block = {}; m.access_type = 'block'; }
        r.message(m.block, readEmpty);
        break;
      case 0x12:
        if (m.access_type !== 'mount' || !m.mount) { delete m.block; m.mount = { fs_type: '', mount_flags: [], volume_mount_group: '' }; m.access_type = 'mount'; }
        r.message(m.mount, readMountVolume);
        break;
      case 0x1a:
        m.access_mode = r.message(m.access_mode ?? { mode: 'UNKNOWN' }, readAccessMode);
        break;
      default: r.skip(tag);
    }
  }
}

function writeMountVolume(w: ProtoWriter, m: MountVolume): void {
  w.stringField(0x0a, m.fs_type);
  w.repeatedStrings(0x12, m.mount_flags, 'csi.v1.VolumeCapability.MountVolume.mount_flags');
  w.stringField(0x1a, m.volume_mount_group);
}

function writeAccessMode(w: ProtoWriter, m: AccessMode): void {
  w.enumField(0x08, m.mode, ACCESS_MODE, 'csi.v1.VolumeCapability.AccessMode.mode');
}

/** Writes a VolumeCapability: every oneof member set is written (as protobufjs did); the receiver keeps the last. */
export function writeVolumeCapability(w: ProtoWriter, m: VolumeCapability): void {
  w.messageField(0x0a, m.block, () => undefined);
  w.messageField(0x12, m.mount, writeMountVolume);
  w.messageField(0x1a, m.access_mode, writeAccessMode);
}
