import * as grpc from '@grpc/grpc-js';
import type { IdentityClient } from '../proto/gen/csi/v1/Identity.js';
import type { NodeClient } from '../proto/gen/csi/v1/Node.js';
import type { NodePublishVolumeRequest } from '../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { loadCsiProto } from '../proto/runtime/loader.js';

/** A kubelet-like CSI client over a Unix socket, for the CLI, the demo, tests and benchmarks. */
export class CsiClient {
  readonly identity: IdentityClient;
  readonly node: NodeClient;

  constructor(socketPath: string) {
    const csi = loadCsiProto().csi.v1;
    const address = `unix://${socketPath}`;
    const creds = grpc.credentials.createInsecure();
    this.identity = new csi.Identity(address, creds);
    this.node = new csi.Node(address, creds);
  }

  /** NodePublishVolume with kubelet's usual fields for a CSI inline volume. */
  publish(request: NodePublishVolumeRequest, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.node.NodePublishVolume(request, { deadline: Date.now() + timeoutMs }, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** NodeUnpublishVolume. */
  unpublish(volumeId: string, targetPath: string, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.node.NodeUnpublishVolume({ volume_id: volumeId, target_path: targetPath }, { deadline: Date.now() + timeoutMs }, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** NodeGetCapabilities: the node capability types the driver advertises. */
  nodeCapabilities(): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.node.NodeGetCapabilities({}, { deadline: Date.now() + 10_000 }, (err, res) => (err || !res ? reject(err) : resolve(res.capabilities.map((c) => c.rpc?.type ?? ''))));
    });
  }

  /** GetPluginInfo: name and vendor version. */
  pluginInfo(): Promise<{ name: string; vendor_version: string }> {
    return new Promise((resolve, reject) => {
      this.identity.GetPluginInfo({}, { deadline: Date.now() + 10_000 }, (err, res) => (err || !res ? reject(err) : resolve(res)));
    });
  }

  /** Probe: whether the driver is ready. */
  probe(): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.identity.Probe({}, { deadline: Date.now() + 10_000 }, (err, res) => (err || !res ? reject(err) : resolve(res.ready?.value === true)));
    });
  }

  close(): void {
    this.node.close();
    this.identity.close();
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
