import type { NodePublishVolumeRequest } from '../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { UnaryMethod } from '../proto/grpc/method.js';
import { UnaryClient } from '../proto/grpc/unary-client.js';
import { CSI_IDENTITY } from '../proto/wire/csi-identity.js';
import { CSI_NODE } from '../proto/wire/csi-node.js';
import type { WireMethod } from '../proto/wire/codec.js';

/** A client's view of a method: it encodes the request input type and decodes the full response. */
function asClient<ReqIn, ReqOut, ResIn, ResOut>(method: WireMethod<ReqIn, ReqOut, ResIn, ResOut>): UnaryMethod<ReqIn, ResOut> {
  return method as unknown as UnaryMethod<ReqIn, ResOut>;
}

/**
 * A kubelet-like CSI client over a Unix socket, for the CLI, the demo, tests and benchmarks.
 * Failed calls reject with a GrpcError (`code`, `details`).
 */
export class CsiClient {
  private readonly client: UnaryClient;

  constructor(socketPath: string) {
    this.client = new UnaryClient(socketPath);
  }

  /** NodePublishVolume with kubelet's usual fields for a CSI inline volume. */
  async publish(request: NodePublishVolumeRequest, timeoutMs = 30_000): Promise<void> {
    await this.client.call(asClient(CSI_NODE.NodePublishVolume), request, { deadline: new Date(Date.now() + timeoutMs) });
  }

  /** NodeUnpublishVolume. */
  async unpublish(volumeId: string, targetPath: string, timeoutMs = 30_000): Promise<void> {
    await this.client.call(asClient(CSI_NODE.NodeUnpublishVolume), { volume_id: volumeId, target_path: targetPath }, { deadline: new Date(Date.now() + timeoutMs) });
  }

  /** NodeGetCapabilities: the node capability types the driver advertises. */
  async nodeCapabilities(): Promise<string[]> {
    const res = await this.client.call(asClient(CSI_NODE.NodeGetCapabilities), {}, { deadline: new Date(Date.now() + 10_000) });
    return res.capabilities.map((c) => String(c.rpc?.type ?? ''));
  }

  /** GetPluginInfo: name and vendor version. */
  async pluginInfo(): Promise<{ name: string; vendor_version: string }> {
    const res = await this.client.call(asClient(CSI_IDENTITY.GetPluginInfo), {}, { deadline: new Date(Date.now() + 10_000) });
    return { name: res.name, vendor_version: res.vendor_version };
  }

  /** Probe: whether the driver is ready. */
  async probe(): Promise<boolean> {
    const res = await this.client.call(asClient(CSI_IDENTITY.Probe), {}, { deadline: new Date(Date.now() + 10_000) });
    return res.ready?.value === true;
  }

  close(): void {
    this.client.close();
  }
}

/** Builds the volume_context kubelet sends for a pod's CSI inline volume (podInfoOnMount). */
export function inlineVolumeContext(pod: { name: string; namespace: string; uid: string; serviceAccountName: string }, spcName: string): Record<string, string> {
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
export function inlinePublishRequest(volumeId: string, targetPath: string, volumeContext: Record<string, string>, secrets: Record<string, string> = {}, volumeMountGroup = ''): NodePublishVolumeRequest {
  return {
    volume_id: volumeId,
    target_path: targetPath,
    readonly: true,
    volume_capability: { mount: { fs_type: '', mount_flags: [], volume_mount_group: volumeMountGroup }, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } },
    volume_context: volumeContext,
    secrets,
  };
}
