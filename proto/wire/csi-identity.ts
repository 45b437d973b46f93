/**
 * Codecs of the CSI Identity service and of the one Controller method served
 * (proto/csi/csi.proto). Oneofs decode as proto-loader's `oneofs: true` shows them (the
 * member set plus a discriminator naming it); when a message carries several members the
 * last one on the wire wins and the others are cleared, as proto3 and Go have it.
 */
import type { BoolValue, BoolValue__Output } from '../gen/google/protobuf/BoolValue.js';
import type { ControllerGetCapabilitiesResponse, ControllerGetCapabilitiesResponse__Output } from '../gen/csi/v1/ControllerGetCapabilitiesResponse.js';
import type { _csi_v1_ControllerServiceCapability_RPC_Type as ControllerRpcType } from '../gen/csi/v1/ControllerServiceCapability.js';
import type { GetPluginCapabilitiesResponse, GetPluginCapabilitiesResponse__Output } from '../gen/csi/v1/GetPluginCapabilitiesResponse.js';
import type { GetPluginInfoResponse, GetPluginInfoResponse__Output } from '../gen/csi/v1/GetPluginInfoResponse.js';
import type {
  PluginCapability, PluginCapability__Output, _csi_v1_PluginCapability_Service as PluginService,
  _csi_v1_PluginCapability_Service__Output as PluginService__Output, _csi_v1_PluginCapability_Service_Type__Output as PluginServiceType,
  _csi_v1_PluginCapability_VolumeExpansion as VolumeExpansion, _csi_v1_PluginCapability_VolumeExpansion__Output as VolumeExpansion__Output,
  _csi_v1_PluginCapability_VolumeExpansion_Type__Output as VolumeExpansionType,
} from '../gen/csi/v1/PluginCapability.js';
import type { ProbeResponse, ProbeResponse__Output } from '../gen/csi/v1/ProbeResponse.js';
import { emptyCodec, enumType, enumTypeReader, readStringMapEntry, wireCodec, type EnumType, type WireMethod } from './codec.js';
import type { ProtoReader } from './reader.js';
import type { ProtoWriter } from './writer.js';

const PLUGIN_SERVICE_TYPE = enumType('csi.v1.PluginCapability.Service.Type',
  ['UNKNOWN', 'CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS', 'GROUP_CONTROLLER_SERVICE']);
const VOLUME_EXPANSION_TYPE = enumType('csi.v1.PluginCapability.VolumeExpansion.Type', ['UNKNOWN', 'ONLINE', 'OFFLINE']);
const CONTROLLER_RPC_TYPE = enumType('csi.v1.ControllerServiceCapability.RPC.Type', [
  'UNKNOWN', 'CREATE_DELETE_VOLUME', 'PUBLISH_UNPUBLISH_VOLUME', 'LIST_VOLUMES', 'GET_CAPACITY', 'CREATE_DELETE_SNAPSHOT',
  'LIST_SNAPSHOTS', 'CLONE_VOLUME', 'PUBLISH_READONLY', 'EXPAND_VOLUME', 'LIST_VOLUMES_PUBLISHED_NODES', 'VOLUME_CONDITION',
  'GET_VOLUME', 'SINGLE_NODE_MULTI_WRITER', 'MODIFY_VOLUME',
]);

function readGetPluginInfoResponse(r: ProtoReader, m: GetPluginInfoResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case 0x0a: m.name = r.string(); break;
      case 0x12: m.vendor_version = r.string(); break;
      case 0x1a: readStringMapEntry(r, m.manifest); break;
      default: r.skip(tag);
    }
  }
}

function writeGetPluginInfoResponse(w: ProtoWriter, m: GetPluginInfoResponse): void {
  w.stringField(0x0a, m.name);
  w.stringField(0x12, m.vendor_version);
  w.stringMap(0x1a, m.manifest, 'csi.v1.GetPluginInfoResponse.manifest');
}

const readPluginService = enumTypeReader<PluginService__Output>(PLUGIN_SERVICE_TYPE);
const readVolumeExpansion = enumTypeReader<VolumeExpansion__Output>(VOLUME_EXPANSION_TYPE);

function readPluginCapability(r: ProtoReader, m: PluginCapability__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) {
      if (m.type !== 'service' || !m.service) { delete m.volume_expansion; m.service = { type: 'UNKNOWN' as PluginServiceType }; m.type = 'service'; }
      r.message(m.service, readPluginService);
    } else if (tag === 0x12) {
      if (m.type !== 'volume_expansion' || !m.volume_expansion) { delete m.service; m.volume_expansion = { type: 'UNKNOWN' as VolumeExpansionType }; m.type = 'volume_expansion'; }
      r.message(m.volume_expansion, readVolumeExpansion);
    } else r.skip(tag);
  }
}

function writePluginCapability(w: ProtoWriter, m: PluginCapability): void {
  w.messageField(0x0a, m.service, (w2, s: PluginService) => w2.enumField(0x08, s.type, PLUGIN_SERVICE_TYPE, 'csi.v1.PluginCapability.Service.type'));
  w.messageField(0x12, m.volume_expansion, (w2, e: VolumeExpansion) => w2.enumField(0x08, e.type, VOLUME_EXPANSION_TYPE, 'csi.v1.PluginCapability.VolumeExpansion.type'));
}

/** A capability `{ oneof type { RPC rpc = 1; } }` whose RPC is `{ Type type = 1; }` (Controller and Node). */
interface RpcCapability<T> {
  rpc?: { type?: T } | null;
  type?: 'rpc';
}

/** Reader and writer of an RPC capability with enum `type` (`field` names it in errors). */
export function rpcCapability<T extends string | number>(type: EnumType, field: string): {
  read(r: ProtoReader, m: RpcCapability<T>): void;
  write(w: ProtoWriter, m: RpcCapability<T>): void;
} {
  const readRpc = enumTypeReader<{ type: T }>(type);
  const writeRpc = (w: ProtoWriter, rpc: { type?: T }): void => w.enumField(0x08, rpc.type, type, field);
  return {
    read(r, m) {
      while (r.more()) {
        const tag = r.tag();
        if (tag === 0x0a) {
          if (!m.rpc) { m.rpc = { type: type.nameOf(0) as T }; m.type = 'rpc'; }
          r.message(m.rpc as { type: T }, readRpc);
        } else r.skip(tag);
      }
    },
    write: (w, m) => w.messageField(0x0a, m.rpc, writeRpc),
  };
}

const CONTROLLER_CAPABILITY = rpcCapability<ControllerRpcType>(CONTROLLER_RPC_TYPE, 'csi.v1.ControllerServiceCapability.RPC.type');

function readProbeResponse(r: ProtoReader, m: ProbeResponse__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x0a) m.ready = r.message(m.ready ?? { value: false }, readBoolValue);
    else r.skip(tag);
  }
}

function readBoolValue(r: ProtoReader, m: BoolValue__Output): void {
  while (r.more()) {
    const tag = r.tag();
    if (tag === 0x08) m.value = r.bool();
    else r.skip(tag);
  }
}

/** The csi.v1.Identity methods, by name. */
export const CSI_IDENTITY = Object.freeze({
  GetPluginInfo: {
    path: '/csi.v1.Identity/GetPluginInfo',
    request: emptyCodec('csi.v1.GetPluginInfoRequest'),
    response: wireCodec<GetPluginInfoResponse, GetPluginInfoResponse__Output>('csi.v1.GetPluginInfoResponse',
      () => ({ name: '', vendor_version: '', manifest: {} }), readGetPluginInfoResponse, writeGetPluginInfoResponse),
  } satisfies WireMethod<object, object, GetPluginInfoResponse, GetPluginInfoResponse__Output>,
  GetPluginCapabilities: {
    path: '/csi.v1.Identity/GetPluginCapabilities',
    request: emptyCodec('csi.v1.GetPluginCapabilitiesRequest'),
    response: wireCodec<GetPluginCapabilitiesResponse, GetPluginCapabilitiesResponse__Output>('csi.v1.GetPluginCapabilitiesResponse',
      () => ({ capabilities: [] }),
      (r, m) => { while (r.more()) { const tag = r.tag(); if (tag === 0x0a) m.capabilities.push(r.message({}, readPluginCapability)); else r.skip(tag); } },
      (w, m) => w.repeatedMessages(0x0a, m.capabilities, writePluginCapability, 'csi.v1.GetPluginCapabilitiesResponse.capabilities')),
  } satisfies WireMethod<object, object, GetPluginCapabilitiesResponse, GetPluginCapabilitiesResponse__Output>,
  Probe: {
    path: '/csi.v1.Identity/Probe',
    request: emptyCodec('csi.v1.ProbeRequest'),
    response: wireCodec<ProbeResponse, ProbeResponse__Output>('csi.v1.ProbeResponse', () => ({ ready: null }), readProbeResponse,
      (w, m) => w.messageField(0x0a, m.ready, (w2, b: BoolValue) => w2.boolField(0x08, b.value))),
  } satisfies WireMethod<object, object, ProbeResponse, ProbeResponse__Output>,
});

/** The csi.v1.Controller methods this driver serves (ControllerGetCapabilities), by name. */
export const CSI_CONTROLLER = Object.freeze({
  ControllerGetCapabilities: {
    path: '/csi.v1.Controller/ControllerGetCapabilities',
    request: emptyCodec('csi.v1.ControllerGetCapabilitiesRequest'),
    response: wireCodec<ControllerGetCapabilitiesResponse, ControllerGetCapabilitiesResponse__Output>('csi.v1.ControllerGetCapabilitiesResponse',
      () => ({ capabilities: [] }),
      (r, m) => { while (r.more()) { const tag = r.tag(); if (tag === 0x0a) m.capabilities.push(r.message({}, CONTROLLER_CAPABILITY.read)); else r.skip(tag); } },
      (w, m) => w.repeatedMessages(0x0a, m.capabilities, CONTROLLER_CAPABILITY.write, 'csi.v1.ControllerGetCapabilitiesResponse.capabilities')),
  } satisfies WireMethod<object, object, ControllerGetCapabilitiesResponse, ControllerGetCapabilitiesResponse__Output>,
});
