/**
 * Codecs of the CSI Node service (proto/csi/csi.proto): the driver decodes requests and
 * encodes responses, bin/csi-client.ts (kubelet's part) the reverse. Maps decode to plain
 * objects holding every key sent, "__proto__" as an own key (codec.ts).
 */
import type { NodeGetCapabilitiesResponse, NodeGetCapabilitiesResponse__Output } from '../gen/csi/v1/NodeGetCapabilitiesResponse.js';
import type { NodeGetInfoResponse, NodeGetInfoResponse__Output } from '../gen/csi/v1/NodeGetInfoResponse.js';
import type { NodePublishVolumeRequest, NodePublishVolumeRequest__Output } from '../gen/csi/v1/NodePublishVolumeRequest.js';
import type { NodeUnpublishVolumeRequest, NodeUnpublishVolumeRequest__Output } from '../gen/csi/v1/NodeUnpublishVolumeRequest.js';
import type { _csi_v1_NodeServiceCapability_RPC_Type as NodeRpcType } from '../gen/csi/v1/NodeServiceCapability.js';
import type { Topology, Topology__Output } from '../gen/csi/v1/Topology.js';
import { emptyCodec, enumType, readStringMapEntry, wireCodec, type WireMethod } from './codec.js';
import { rpcCapability } from './csi-identity.js';
import { newVolumeCapability, readVolumeCapability, writeVolumeCapability } from './csi-volume.js';
import type { ProtoReader } from './reader.js';
import type { ProtoWriter } from './writer.js';

const NODE_RPC_TYPE = enumType('csi.v1.NodeServiceCapability.RPC.Type', [
  'UNKNOWN', 'STAGE_UNSTAGE_VOLUME', 'GET_VOLUME_STATS', 'EXPAND_VOLUME', 'VOLUME_CONDITION', 'SINGLE_NODE_MULTI_WRITER', 'VOLUME_MOUNT_GROUP',
]);
const NODE_CAPABILITY = rpcCapability<NodeRpcType>(NODE_RPC_TYPE, 'csi.v1.NodeServiceCapability.RPC.type');

function newPublishRequest(): NodePublishVolumeRequest__Output {
  return {
    volume_id: '', publish_context: {}, staging_target_path: '', target_path: '',
    volume_capability: null, readonly: false, secrets: {}, volume_context: {},
  };
}

function readPublishRequest(r: ProtoReader, m: NodePublishVolumeRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.volume_id = r.string(); break;
      case 0x12: readStringMapEntry(r, m.publish_context); break;
      case 0x1a: m.staging_target_path = r.string(); break;
      case 0x22: m.target_path = r.string(); break;
      case 0x2a: m.volume_capability = r.message(m.volume_capability ?? newVolumeCapability(), readVolumeCapability); break;
      case 0x30: m.readonly = r.bool(); break;
      case 0x3a: readStringMapEntry(r, m.secrets); break;
      case 0x42: readStringMapEntry(r, m.volume_context); break;
      default: r.skip(tag);
    }
  }
}

function writePublishRequest(w: ProtoWriter, m: NodePublishVolumeRequest): void {
  w.stringField(0x0a, m.volume_id);
  w.stringMap(0x12, m.publish_context, 'csi.v1.NodePublishVolumeRequest.publish_context');
  w.stringField(0x1a, m.staging_target_path);
  w.stringField(0x22, m.target_path);
  w.messageField(0x2a, m.volume_capability, writeVolumeCapability);
  w.boolField(0x30, m.readonly);
  w.stringMap(0x3a, m.secrets, 'csi.v1.NodePublishVolumeRequest.secrets');
  w.stringMap(0x42, m.volume_context, 'csi.v1.NodePublishVolumeRequest.volume_context');
}

function readUnpublishRequest(r: ProtoReader, m: NodeUnpublishVolumeRequest__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.volume_id = r.string();
    else if (tag === 0x12) m.target_path = r.string();
    else r.skip(tag);
  }
}

function readTopology(r: ProtoReader, m: Topology__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) readStringMapEntry(r, m.segments);
    else r.skip(tag);
  }
}

function readGetInfoResponse(r: ProtoReader, m: NodeGetInfoResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.node_id = r.string(); break;
      case 0x10: m.max_volumes_per_node = r.int64(); break;
      case 0x1a: m.accessible_topology = r.message(m.accessible_topology ?? { segments: {} }, readTopology); break;
      default: r.skip(tag);
    }
  }
}

function writeGetInfoResponse(w: ProtoWriter, m: NodeGetInfoResponse): void {
  w.stringField(0x0a, m.node_id);
  w.int64Field(0x10, m.max_volumes_per_node, 'csi.v1.NodeGetInfoResponse.max_volumes_per_node');
  w.messageField(0x1a, m.accessible_topology, (w2, t: Topology) => w2.stringMap(0x0a, t.segments, 'csi.v1.Topology.segments'));
}

/**
 * A Node method the driver answers UNIMPLEMENTED (it advertises neither
 * STAGE_UNSTAGE_VOLUME, GET_VOLUME_STATS nor EXPAND_VOLUME): its request is checked to be
 * well-formed protobuf and its fields skipped, and no response is ever encoded. A client
 * of these methods needs the full messages; none of ours calls them.
 */
function unservedMethod(name: string): WireMethod<object, object, object, object> {
  return { path: `/csi.v1.Node/${name}`, request: emptyCodec(`csi.v1.${name}Request`), response: emptyCodec(`csi.v1.${name}Response`) };
}

/** Node methods whose codecs only check and skip (unservedMethod): the oracle tests leave them out. */
export const UNSERVED_NODE_METHODS: ReadonlySet<string> = new Set(['NodeStageVolume', 'NodeUnstageVolume', 'NodeGetVolumeStats', 'NodeExpandVolume']);

/** The csi.v1.Node methods, by name (stage, unstage, stats and expand are answered UNIMPLEMENTED). */
export const CSI_NODE = Object.freeze({
  NodePublishVolume: {
    path: '/csi.v1.Node/NodePublishVolume',
    request: wireCodec<NodePublishVolumeRequest, NodePublishVolumeRequest__Output>('csi.v1.NodePublishVolumeRequest',
      newPublishRequest, readPublishRequest, writePublishRequest),
    response: emptyCodec('csi.v1.NodePublishVolumeResponse'),
  } satisfies WireMethod<NodePublishVolumeRequest, NodePublishVolumeRequest__Output, object, object>,
  NodeUnpublishVolume: {
    path: '/csi.v1.Node/NodeUnpublishVolume',
    request: wireCodec<NodeUnpublishVolumeRequest, NodeUnpublishVolumeRequest__Output>('csi.v1.NodeUnpublishVolumeRequest',
      () => ({ volume_id: '', target_path: '' }), readUnpublishRequest,
      (w, m) => { w.stringField(0x0a, m.volume_id); w.stringField(0x12, m.target_path); }),
    response: emptyCodec('csi.v1.NodeUnpublishVolumeResponse'),
  } satisfies WireMethod<NodeUnpublishVolumeRequest, NodeUnpublishVolumeRequest__Output, object, object>,
  NodeGetInfo: {
    path: '/csi.v1.Node/NodeGetInfo',
    request: emptyCodec('csi.v1.NodeGetInfoRequest'),
    response: wireCodec<NodeGetInfoResponse, NodeGetInfoResponse__Output>('csi.v1.NodeGetInfoResponse',
      () => ({ node_id: '', max_volumes_per_node: 0, accessible_topology: null }), readGetInfoResponse, writeGetInfoResponse),
  } satisfies WireMethod<object, object, NodeGetInfoResponse, NodeGetInfoResponse__Output>,
  NodeGetCapabilities: {
    path: '/csi.v1.Node/NodeGetCapabilities',
    request: emptyCodec('csi.v1.NodeGetCapabilitiesRequest'),
    response: wireCodec<NodeGetCapabilitiesResponse, NodeGetCapabilitiesResponse__Output>('csi.v1.NodeGetCapabilitiesResponse',
      () => ({ capabilities: [] }),
      (r, m) => { while (r.more()) { const tag = r.tag(); if (tag === 0x0a) m.capabilities.push(r.message({}, NODE_CAPABILITY.read)); else r.skip(tag); } },
      (w, m) => w.repeatedMessages(0x0a, m.capabilities, NODE_CAPABILITY.write, 'csi.v1.NodeGetCapabilitiesResponse.capabilities')),
  } satisfies WireMethod<object, object, NodeGetCapabilitiesResponse, NodeGetCapabilitiesResponse__Output>,
  NodeStageVolume: unservedMethod('NodeStageVolume'),
  NodeUnstageVolume: unservedMethod('NodeUnstageVolume'),
  NodeGetVolumeStats: unservedMethod('NodeGetVolumeStats'),
  NodeExpandVolume: unservedMethod('NodeExpandVolume'),
});
