import { expect } from 'chai';
import { inlinePublishRequest, inlineVolumeContext } from '../../bin/csi-client.js';
import { buildMountRequest } from '../../driver/provider-client/mount-request.js';
import type { NodePublishVolumeRequest, NodePublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { NodePublishVolumeResponse } from '../../proto/gen/csi/v1/NodePublishVolumeResponse.js';
import type { MountRequest, MountRequest__Output } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse, MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import type { UnaryMethod } from '../../proto/grpc/method.js';
import { CSI_CONTROLLER, CSI_IDENTITY } from '../../proto/wire/csi-identity.js';
import { CSI_NODE } from '../../proto/wire/csi-node.js';
import { CSI_PROVIDER } from '../../proto/wire/provider.js';
import { ProtobufDecodeError } from '../../proto/wire/reader.js';

// Where the codecs follow proto3 and Go's runtime rather than protobufjs (which the
// oracle tests cannot check), and what callers rely on.

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (h: string): Buffer => Buffer.from(h.replace(/\s/g, ''), 'hex');
const publish = CSI_NODE.NodePublishVolume.request;

// The tables are the transport's UnaryMethods from both ends (checked by tsc).
const serverView: UnaryMethod<NodePublishVolumeRequest__Output, NodePublishVolumeResponse> = CSI_NODE.NodePublishVolume;
const clientView: UnaryMethod<NodePublishVolumeRequest, object> = CSI_NODE.NodePublishVolume;
const providerView: UnaryMethod<MountRequest__Output, MountResponse> = CSI_PROVIDER.Mount;
const driverView: UnaryMethod<MountRequest, MountResponse__Output> = CSI_PROVIDER.Mount;

describe('protobuf codecs (proto/wire): proto3 and Go semantics', () => {
  it('are UnaryMethods for servers and clients alike', () => {
    expect([serverView.path, clientView.path, providerView.path, driverView.path])
      .to.deep.equal(['/csi.v1.Node/NodePublishVolume', '/csi.v1.Node/NodePublishVolume', '/v1alpha1.CSIDriverProvider/Mount', '/v1alpha1.CSIDriverProvider/Mount']);
  });

  it('do not write scalars equal to their default (proto3, as Go), but do write present sub-messages', () => {
    expect(hex(publish.encode({ volume_id: '', readonly: false, publish_context: {}, volume_capability: null, secrets: {} }))).to.equal('');
    expect(hex(CSI_NODE.NodeGetInfo.response.encode({ node_id: '', max_volumes_per_node: 0 }))).to.equal('');
    expect(hex(CSI_NODE.NodeGetInfo.response.encode({ max_volumes_per_node: '0' }))).to.equal('');
    expect(hex(CSI_IDENTITY.Probe.response.encode({ ready: { value: false } }))).to.equal('0a00');
    expect(hex(CSI_PROVIDER.Mount.response.encode({ files: [{ path: '', mode: 0, contents: Buffer.alloc(0) }], error: { code: '' } }))).to.equal('1200' + '1a00');
    expect(hex(CSI_CONTROLLER.ControllerGetCapabilities.response.encode({ capabilities: [{ rpc: { type: 'UNKNOWN' } }] }))).to.equal('0a020a00');
  });

  it('encode in field order with the CSI spec field numbers', () => {
    expect(hex(CSI_NODE.NodeUnpublishVolume.request.encode({ volume_id: 'v', target_path: '/t' }))).to.equal('0a0176' + '12022f74');
    expect(hex(publish.encode({ volume_id: 'v', volume_capability: { mount: { mount_flags: ['ro'] }, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } }, readonly: true, volume_context: { k: 'v' } })))
      .to.equal('0a0176' + '2a0a' + '1204' + '1202726f' + '1a020802' + '3001' + '4206' + '0a016b' + '120176');
    expect(hex(CSI_PROVIDER.Mount.response.encode({ object_version: [{ id: 'a', version: '1' }], files: [{ path: 'a', mode: 420, contents: Buffer.from('x') }] })))
      .to.equal('0a06' + '0a0161' + '120131' + '1a09' + '0a0161' + '10a403' + '1a0178');
  });

  it('merge a sub-message sent twice (Go merges; protobufjs kept only the last)', () => {
    const first = publish.encode({ volume_capability: { mount: { fs_type: 'ext4', mount_flags: ['a'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } } });
    const second = publish.encode({ volume_capability: { mount: { mount_flags: ['b'], volume_mount_group: '7' }, access_mode: {} } });
    expect(publish.decode(Buffer.concat([first, second])).volume_capability).to.deep.equal({
      access_mode: { mode: 'SINGLE_NODE_WRITER' }, mount: { fs_type: 'ext4', mount_flags: ['a', 'b'], volume_mount_group: '7' }, access_type: 'mount',
    });
    expect(CSI_IDENTITY.Probe.response.decode(bytes('0a020801 0a00')).ready).to.deep.equal({ value: true });
    expect(CSI_PROVIDER.Mount.response.decode(bytes('1203 0a0161 1200')).error).to.deep.equal({ code: 'a' });
  });

  it('keep only the last member of a oneof on the wire, with its discriminator (protobufjs kept both)', () => {
    const block = '0a00';
    const mount = '1204 0a0278 66';
    expect(publish.decode(bytes(`2a08 ${block} ${mount}`)).volume_capability).to.deep.equal({ access_mode: null, mount: { fs_type: 'xf', mount_flags: [], volume_mount_group: '' }, access_type: 'mount' });
    expect(publish.decode(bytes(`2a08 ${mount} ${block}`)).volume_capability).to.deep.equal({ access_mode: null, block: {}, access_type: 'block' });
    const capabilities = CSI_IDENTITY.GetPluginCapabilities.response.decode(bytes('0a08 0a020801 12020802')).capabilities;
    expect(capabilities).to.deep.equal([{ volume_expansion: { type: 'OFFLINE' }, type: 'volume_expansion' }]);
    expect(CSI_IDENTITY.GetPluginCapabilities.response.decode(bytes('0a08 12020802 0a020801')).capabilities).to.deep.equal([{ service: { type: 'CONTROLLER_SERVICE' }, type: 'service' }]);
  });

  it('skip a known field number sent with another wire type, as Go does (protobufjs read it as its own type)', () => {
    // volume_id (1) as a varint, readonly (6) as bytes, target_path (4) as fixed32.
    expect(publish.decode(bytes('0805 3201ff 2501020304 0a0176'))).to.include({ volume_id: 'v', readonly: false, target_path: '' });
    expect(CSI_PROVIDER.Mount.response.decode(bytes('1a05 1203616263')).files).to.deep.equal([{ path: '', mode: 0, contents: Buffer.alloc(0) }]);
  });

  it('refuse a string running past its message (protobufjs returned it cut short) and groups (protobufjs skipped them)', () => {
    expect(() => publish.decode(bytes('0a0541'))).to.throw(ProtobufDecodeError, 'csi.v1.NodePublishVolumeRequest: length 5 past the end in field 1 at byte 2');
    expect(() => publish.decode(bytes('0b0c'))).to.throw(ProtobufDecodeError, 'csi.v1.NodePublishVolumeRequest: group (wire type 3) not supported in field 1 at byte 1');
    expect(() => CSI_PROVIDER.Mount.request.decode(bytes('2a03 0a0541'))).to.throw(ProtobufDecodeError, 'v1alpha1.MountRequest: length 5 past the end in field 1 at byte 4');
  });

  it('name the field of an enum value the enum lacks (protobufjs silently sent 0)', () => {
    expect(() => publish.encode({ volume_capability: { access_mode: { mode: 'READ_MOSTLY' as never } } }))
      .to.throw(TypeError, 'csi.v1.VolumeCapability.AccessMode.mode: "READ_MOSTLY" is not a csi.v1.VolumeCapability.AccessMode.Mode value');
    expect(hex(publish.encode({ volume_capability: { access_mode: { mode: 3 } } }))).to.equal('2a04' + '1a020803');
  });

  it('decode maps to plain objects whose prototype no key changes', () => {
    const context = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":"c","hasOwnProperty":"h"}') as Record<string, string>;
    const decoded = publish.decode(publish.encode({ volume_context: context })).volume_context;
    expect(Object.getPrototypeOf(decoded)).to.equal(Object.prototype);
    expect(Object.keys(decoded)).to.deep.equal(['__proto__', 'constructor', 'hasOwnProperty']);
    expect(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value).to.equal('[object Object]');
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('encode what the driver and the kubelet-like client build, and decode it back', () => {
    const request = inlinePublishRequest('csi-1', '/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/s/mount',
      inlineVolumeContext({ name: 'web', namespace: 'default', uid: 'u', serviceAccountName: 'sa' }, 'spc'), { key: 'secret' }, '1000');
    const decoded = publish.decode(publish.encode(request));
    expect(decoded).to.deep.equal({
      volume_id: 'csi-1', publish_context: {}, staging_target_path: '', target_path: request.target_path, readonly: true,
      volume_capability: { access_mode: { mode: 'SINGLE_NODE_READER_ONLY' }, mount: { fs_type: '', mount_flags: [], volume_mount_group: '1000' }, access_type: 'mount' },
      secrets: { key: 'secret' }, volume_context: request.volume_context,
    });
    const mount = buildMountRequest({ parameters: { a: 'b' }, volumeContext: {}, secrets: {}, targetPath: '/t', defaultMode: 0o644, currentVersions: [{ id: 'x', version: '1' }] });
    expect(CSI_PROVIDER.Mount.request.decode(CSI_PROVIDER.Mount.request.encode(mount)))
      .to.deep.equal({ attributes: '{"a":"b"}', secrets: '{}', target_path: '/t', permission: '420', current_object_version: [{ id: 'x', version: '1' }] });
  });
});
