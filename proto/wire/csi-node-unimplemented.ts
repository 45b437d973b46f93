/**
 * Codecs of the four csi.v1.Node methods the driver answers UNIMPLEMENTED (it advertises
 * neither STAGE_UNSTAGE_VOLUME, GET_VOLUME_STATS nor EXPAND_VOLUME). They are complete all
 * the same: a request still has to decode before the answer, and a client or test may
 * speak them.
 */
import type { CapacityRange, CapacityRange__Output } from '../gen/csi/v1/CapacityRange.js';
import type { NodeExpandVolumeRequest, NodeExpandVolumeRequest__Output } from '../gen/csi/v1/NodeExpandVolumeRequest.js';
import type { NodeExpandVolumeResponse, NodeExpandVolumeResponse__Output } from '../gen/csi/v1/NodeExpandVolumeResponse.js';
import type { NodeGetVolumeStatsRequest, NodeGetVolumeStatsRequest__Output } from '../gen/csi/v1/NodeGetVolumeStatsRequest.js';
import type { NodeGetVolumeStatsResponse, NodeGetVolumeStatsResponse__Output } from '../gen/csi/v1/NodeGetVolumeStatsResponse.js';
import type { NodeStageVolumeRequest, NodeStageVolumeRequest__Output } from '../gen/csi/v1/NodeStageVolumeRequest.js';
import type { NodeUnstageVolumeRequest, NodeUnstageVolumeRequest__Output } from '../gen/csi/v1/NodeUnstageVolumeRequest.js';
import type { VolumeCondition, VolumeCondition__Output } from '../gen/csi/v1/VolumeCondition.js';
import type { VolumeUsage, VolumeUsage__Output } from '../gen/csi/v1/VolumeUsage.js';
import { emptyCodec, enumType, readStringMapEntry, wireCodec, type WireMethod } from './codec.js';
import { newVolumeCapability, readVolumeCapability, writeVolumeCapability } from './csi-volume.js';
import type { ProtoReader } from './reader.js';
import type { ProtoWriter } from './writer.js';

const USAGE_UNIT = enumType('csi.v1.VolumeUsage.Unit', ['UNKNOWN', 'BYTES', 'INODES']);

function readStageRequest(r: ProtoReader, m: NodeStageVolumeRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.volume_id = r.string(); break;
      case 0x12: readStringMapEntry(r, m.publish_context); break;
      case 0x1a: m.staging_target_path = r.string(); break;
      case 0x22: m.volume_capability = r.message(m.volume_capability ?? newVolumeCapability(), readVolumeCapability); break;
      case 0x2a: readStringMapEntry(r, m.secrets); break;
      case 0x32: readStringMapEntry(r, m.volume_context); break;
      default: r.skip(tag);
    }
  }
}

function writeStageRequest(w: ProtoWriter, m: NodeStageVolumeRequest): void {
  w.stringField(0x0a, m.volume_id);
  w.stringMap(0x12, m.publish_context, 'csi.v1.NodeStageVolumeRequest.publish_context');
  w.stringField(0x1a, m.staging_target_path);
  w.messageField(0x22, m.volume_capability, writeVolumeCapability);
  w.stringMap(0x2a, m.secrets, 'csi.v1.NodeStageVolumeRequest.secrets');
  w.stringMap(0x32, m.volume_context, 'csi.v1.NodeStageVolumeRequest.volume_context');
}

function readUnstageRequest(r: ProtoReader, m: NodeUnstageVolumeRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.volume_id = r.string();
    else if (tag === 0x12) m.staging_target_path = r.string();
    else r.skip(tag);
  }
}

function readStatsRequest(r: ProtoReader, m: NodeGetVolumeStatsRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.volume_id = r.string(); break;
      case 0x12: m.volume_path = r.string(); break;
      case 0x1a: m.staging_target_path = r.string(); break;
      default: r.skip(tag);
    }
  }
}

function readUsage(r: ProtoReader, m: VolumeUsage__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x08: m.available = r.int64(); break;
      case 0x10: m.total = r.int64(); break;
      case 0x18: m.used = r.int64(); break;
      case 0x20: m.unit = USAGE_UNIT.nameOf(r.int32()) as VolumeUsage__Output['unit']; break;
      default: r.skip(tag);
    }
  }
}

function writeUsage(w: ProtoWriter, m: VolumeUsage): void {
  w.int64Field(0x08, m.available, 'csi.v1.VolumeUsage.available');
  w.int64Field(0x10, m.total, 'csi.v1.VolumeUsage.total');
  w.int64Field(0x18, m.used, 'csi.v1.VolumeUsage.used');
  w.enumField(0x20, m.unit, USAGE_UNIT, 'csi.v1.VolumeUsage.unit');
}

function readCondition(r: ProtoReader, m: VolumeCondition__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x08) m.abnormal = r.bool();
    else if (tag === 0x12) m.message = r.string();
    else r.skip(tag);
  }
}

function readStatsResponse(r: ProtoReader, m: NodeGetVolumeStatsResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.usage.push(r.message({ available: 0, total: 0, used: 0, unit: 'UNKNOWN' }, readUsage));
    else if (tag === 0x12) m.volume_condition = r.message(m.volume_condition ?? { abnormal: false, message: '' }, readCondition);
    else r.skip(tag);
  }
}

function writeStatsResponse(w: ProtoWriter, m: NodeGetVolumeStatsResponse): void {
  w.repeatedMessages(0x0a, m.usage, writeUsage, 'csi.v1.NodeGetVolumeStatsResponse.usage');
  w.messageField(0x12, m.volume_condition, (w2, c: VolumeCondition) => { w2.boolField(0x08, c.abnormal); w2.stringField(0x12, c.message); });
}

function readCapacityRange(r: ProtoReader, m: CapacityRange__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x08) m.required_bytes = r.int64();
    else if (tag === 0x10) m.limit_bytes = r.int64();
    else r.skip(tag);
  }
}

function readExpandRequest(r: ProtoReader, m: NodeExpandVolumeRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.volume_id = r.string(); break;
      case 0x12: m.volume_path = r.string(); break;
      case 0x1a: m.capacity_range = r.message(m.capacity_range ?? { required_bytes: 0, limit_bytes: 0 }, readCapacityRange); break;
      case 0x22: m.staging_target_path = r.string(); break;
      case 0x2a: m.volume_capability = r.message(m.volume_capability ?? newVolumeCapability(), readVolumeCapability); break;
      case 0x32: readStringMapEntry(r, m.secrets); break;
      default: r.skip(tag);
    }
  }
}

function writeExpandRequest(w: ProtoWriter, m: NodeExpandVolumeRequest): void {
  w.stringField(0x0a, m.volume_id);
  w.stringField(0x12, m.volume_path);
  w.messageField(0x1a, m.capacity_range, (w2, c: CapacityRange) => {
    w2.int64Field(0x08, c.required_bytes, 'csi.v1.CapacityRange.required_bytes');
    w2.int64Field(0x10, c.limit_bytes, 'csi.v1.CapacityRange.limit_bytes');
  });
  w.stringField(0x22, m.staging_target_path);
  w.messageField(0x2a, m.volume_capability, writeVolumeCapability);
  w.stringMap(0x32, m.secrets, 'csi.v1.NodeExpandVolumeRequest.secrets');
}

/** NodeStageVolume: answered UNIMPLEMENTED by the driver, complete for clients and tests. */
export const NODE_STAGE_VOLUME = {
  path: '/csi.v1.Node/NodeStageVolume',
  request: wireCodec<NodeStageVolumeRequest, NodeStageVolumeRequest__Output>('csi.v1.NodeStageVolumeRequest',
    () => ({ volume_id: '', publish_context: {}, staging_target_path: '', volume_capability: null, secrets: {}, volume_context: {} }),
    readStageRequest, writeStageRequest),
  response: emptyCodec('csi.v1.NodeStageVolumeResponse'),
} satisfies WireMethod<NodeStageVolumeRequest, NodeStageVolumeRequest__Output, object, object>;

/** NodeUnstageVolume: answered UNIMPLEMENTED by the driver, complete for clients and tests. */
export const NODE_UNSTAGE_VOLUME = {
  path: '/csi.v1.Node/NodeUnstageVolume',
  request: wireCodec<NodeUnstageVolumeRequest, NodeUnstageVolumeRequest__Output>('csi.v1.NodeUnstageVolumeRequest',
    () => ({ volume_id: '', staging_target_path: '' }),
    readUnstageRequest, (w, m) => { w.stringField(0x0a, m.volume_id); w.stringField(0x12, m.staging_target_path); }),
  response: emptyCodec('csi.v1.NodeUnstageVolumeResponse'),
} satisfies WireMethod<NodeUnstageVolumeRequest, NodeUnstageVolumeRequest__Output, object, object>;

/** NodeGetVolumeStats: answered UNIMPLEMENTED by the driver, complete for clients and tests. */
export const NODE_GET_VOLUME_STATS = {
  path: '/csi.v1.Node/NodeGetVolumeStats',
  request: wireCodec<NodeGetVolumeStatsRequest, NodeGetVolumeStatsRequest__Output>('csi.v1.NodeGetVolumeStatsRequest',
    () => ({ volume_id: '', volume_path: '', staging_target_path: '' }),
    readStatsRequest, (w, m) => { w.stringField(0x0a, m.volume_id); w.stringField(0x12, m.volume_path); w.stringField(0x1a, m.staging_target_path); }),
  response: wireCodec<NodeGetVolumeStatsResponse, NodeGetVolumeStatsResponse__Output>('csi.v1.NodeGetVolumeStatsResponse',
    () => ({ usage: [], volume_condition: null }), readStatsResponse, writeStatsResponse),
} satisfies WireMethod<NodeGetVolumeStatsRequest, NodeGetVolumeStatsRequest__Output, NodeGetVolumeStatsResponse, NodeGetVolumeStatsResponse__Output>;

/** NodeExpandVolume: answered UNIMPLEMENTED by the driver, complete for clients and tests. */
export const NODE_EXPAND_VOLUME = {
  path: '/csi.v1.Node/NodeExpandVolume',
  request: wireCodec<NodeExpandVolumeRequest, NodeExpandVolumeRequest__Output>('csi.v1.NodeExpandVolumeRequest',
    () => ({ volume_id: '', volume_path: '', capacity_range: null, staging_target_path: '', volume_capability: null, secrets: {} }),
    readExpandRequest, writeExpandRequest),
  response: wireCodec<NodeExpandVolumeResponse, NodeExpandVolumeResponse__Output>('csi.v1.NodeExpandVolumeResponse',
    () => ({ capacity_bytes: 0 }),
    (r, m) => { while (r.more()) { const tag = r.tag(); if (tag === 0x08) m.capacity_bytes = r.int64(); else r.skip(tag); } },
    (w, m) => w.int64Field(0x08, m.capacity_bytes, 'csi.v1.NodeExpandVolumeResponse.capacity_bytes')),
} satisfies WireMethod<NodeExpandVolumeRequest, NodeExpandVolumeRequest__Output, NodeExpandVolumeResponse, NodeExpandVolumeResponse__Output>;
