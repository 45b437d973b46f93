import * as grpc from '@grpc/grpc-js';
import type { GetPluginInfoResponse__Output } from '../proto/gen/csi/v1/GetPluginInfoResponse.js';
import type { IdentityClient } from '../proto/gen/csi/v1/Identity.js';
import type { NodeClient } from '../proto/gen/csi/v1/Node.js';
import type { NodeGetCapabilitiesResponse__Output } from '../proto/gen/csi/v1/NodeGetCapabilitiesResponse.js';
import type { NodePublishVolumeRequest } from '../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { ProbeResponse__Output } from '../proto/gen/csi/v1/ProbeResponse.js';
import { csiProto } from '../lib/grpc/grpc-proto.js';
import { COMMON_CHANNEL_OPTIONS } from '../lib/grpc/service.js';

/** Runs one call with a deadline `timeoutMs` from now; rejects with grpc-js's ServiceError (`code`, `details`). */
function callWithin<Res>(
  timeoutMs: number,
  call: (options: grpc.CallOptions, done: grpc.requestCallback<Res>) => grpc.ClientUnaryCall,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    call({ deadline: new Date(Date.now() + timeoutMs) }, (err, res) => (err ? reject(err) : resolve(res as Res)));
  });
}

/**
 * A kubelet-like CSI client over a Unix socket, for the CLI, the demo, tests and benchmarks,
 * on grpc-js as kubelet is on grpc-go. Failed calls reject with a ServiceError (`code`, `details`).
 */
export class CsiClient {
  private readonly node: NodeClient;
  private readonly identity: IdentityClient;

  constructor(socketPath: string) {
    const csi = csiProto();
    // kubelet dials a CSI driver with authority "localhost"; one channel serves both services.
    const options = { ...COMMON_CHANNEL_OPTIONS, 'grpc.default_authority': 'localhost' };
    this.node = new csi.Node(`unix://${socketPath}`, grpc.credentials.createInsecure(), options);
    this.identity = new csi.Identity('', grpc.credentials.createInsecure(), {
      channelOverride: this.node.getChannel(),
    });
  }

  /** NodePublishVolume with kubelet's usual fields for a CSI inline volume. */
  async publish(request: NodePublishVolumeRequest, timeoutMs = 30_000): Promise<void> {
    await callWithin(timeoutMs, (o, done) => this.node.NodePublishVolume(request, o, done));
  }

  /** NodeUnpublishVolume. */
  async unpublish(volumeId: string, targetPath: string, timeoutMs = 30_000): Promise<void> {
    await callWithin(timeoutMs, (o, done) =>
      this.node.NodeUnpublishVolume({ volume_id: volumeId, target_path: targetPath }, o, done),
    );
  }

  /** NodeGetCapabilities: the node capability types the driver advertises. */
  async nodeCapabilities(): Promise<string[]> {
    const res = await callWithin<NodeGetCapabilitiesResponse__Output>(10_000, (o, done) =>
      this.node.NodeGetCapabilities({}, o, done),
    );
    return res.capabilities.map((c) => String(c.rpc?.type ?? ''));
  }

  /** GetPluginInfo: name and vendor version. */
  async pluginInfo(): Promise<{ name: string; vendor_version: string }> {
    const res = await callWithin<GetPluginInfoResponse__Output>(10_000, (o, done) =>
      this.identity.GetPluginInfo({}, o, done),
    );
    return { name: res.name, vendor_version: res.vendor_version };
  }

  /** Probe: whether the driver is ready. */
  async probe(): Promise<boolean> {
    const res = await callWithin<ProbeResponse__Output>(10_000, (o, done) => this.identity.Probe({}, o, done));
    return res.ready?.value === true;
  }

  /** Closes the channel (calls in flight fail with CANCELLED). */
  close(): void {
    this.node.close();
  }
}

/** Builds the volume_context kubelet sends for a pod's CSI inline volume (podInfoOnMount). */
export function inlineVolumeContext(
  pod: { name: string; namespace: string; uid: string; serviceAccountName: string },
  spcName: string,
): Record<string, string> {
  return {
    secretProviderClass: spcName,
    'csi.storage.k8s.io/pod.name': pod.name,
    'csi.storage.k8s.io/pod.namespace': pod.namespace,
    'csi.storage.k8s.io/pod.uid': pod.uid,
    'csi.storage.k8s.io/serviceAccount.name': pod.serviceAccountName,
    'csi.storage.k8s.io/ephemeral': 'true',
  };
}

/**
 * A complete NodePublishVolumeRequest for a CSI inline volume, as kubelet sends it.
 * `volumeMountGroup` is the pod's fsGroup as kubelet formats it (decimal), '' for none.
 */
export function inlinePublishRequest(
  volumeId: string,
  targetPath: string,
  volumeContext: Record<string, string>,
  secrets: Record<string, string> = {},
  volumeMountGroup = '',
): NodePublishVolumeRequest {
  return {
    volume_id: volumeId,
    target_path: targetPath,
    readonly: true,
    volume_capability: {
      mount: { fs_type: '', mount_flags: [], volume_mount_group: volumeMountGroup },
      access_mode: { mode: 'SINGLE_NODE_READER_ONLY' },
    },
    volume_context: volumeContext,
    secrets,
  };
}
