// A pod with a Secrets Store CSI inline volume, created in the test cluster, and the
// NodePublishVolumeRequest kubelet sends for it: kubelet's target path and volume id,
// podInfoOnMount attributes, service-account tokens minted for the pod, and the
// nodePublishSecretRef's data in `secrets`.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { inlinePublishRequest, inlineVolumeContext } from '../../bin/csi-client.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { KubeCluster } from './kube-cluster.js';

/** The CSI driver name in pod specs (upstream's and ours). */
export const CSI_DRIVER_NAME = 'secrets-store.csi.k8s.io';
/** The volume_context key kubelet puts the pod's service-account tokens under. */
export const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

/** What a test pod looks like. */
export interface InlinePodOptions {
  readonly namespace: string;
  readonly name: string;
  /** The SecretProviderClass in the pod's volumeAttributes. */
  readonly spc: string;
  /** Node the pod is bound to (the driver's --nodeid: drivers watch only their node's pods). */
  readonly nodeName: string;
  /** kubelet's root dir (`/var/lib/kubelet` on a node): target paths go below it. */
  readonly kubeletDir: string;
  /** Data of a Secret created and referenced as nodePublishSecretRef; omitted = no ref. */
  readonly nodePublishSecret?: Readonly<Record<string, string>>;
  /** Audiences kubelet mints tokens for (the CSIDriver's tokenRequests). */
  readonly tokenAudiences?: readonly string[];
  readonly volumeName?: string;
  /** The pod's service account (it must exist in the namespace); default `default`. */
  readonly serviceAccountName?: string;
}

/** A pod in the API with one inline volume, and kubelet's view of that volume. */
export interface InlinePod {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly volumeId: string;
  /** `<kubeletDir>/pods/<uid>/volumes/kubernetes.io~csi/<volume>/mount`. */
  readonly targetPath: string;
  /** The NodePublishVolumeRequest kubelet sends (first mount and each requiresRepublish), with fresh tokens. */
  publishRequest(): Promise<NodePublishVolumeRequest>;
}

/** Creates the pod (and its nodePublishSecretRef Secret) and returns how kubelet would publish its volume. */
export async function createInlinePod(cluster: KubeCluster, options: InlinePodOptions): Promise<InlinePod> {
  const { namespace, name, spc } = options;
  const volumeName = options.volumeName ?? 'secrets-store';
  const serviceAccountName = options.serviceAccountName ?? 'default';
  const secretName = `${name}-creds`;
  if (options.nodePublishSecret) {
    await cluster.admin.core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: secretName }, stringData: { ...options.nodePublishSecret } },
    });
  }
  const pod = await cluster.admin.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        nodeName: options.nodeName,
        serviceAccountName,
        containers: [
          {
            name: 'app',
            image: 'busybox',
            volumeMounts: [{ name: volumeName, mountPath: '/mnt/secrets-store', readOnly: true }],
          },
        ],
        volumes: [
          {
            name: volumeName,
            csi: {
              driver: CSI_DRIVER_NAME,
              readOnly: true,
              volumeAttributes: { secretProviderClass: spc },
              ...(options.nodePublishSecret ? { nodePublishSecretRef: { name: secretName } } : {}),
            },
          },
        ],
      },
    },
  });
  const uid = pod.metadata?.uid ?? '';
  // kubelet's handle for an inline volume: "csi-" + sha256 of the pod UID and volume name.
  const volumeId = `csi-${createHash('sha256').update(`${uid}${volumeName}`).digest('hex')}`;
  const targetPath = join(options.kubeletDir, 'pods', uid, 'volumes', 'kubernetes.io~csi', volumeName, 'mount');

  async function tokens(): Promise<string | undefined> {
    const audiences = options.tokenAudiences ?? [];
    if (audiences.length === 0) return undefined;
    const out: Record<string, { token: string; expirationTimestamp: string }> = {};
    for (const audience of audiences) {
      const res = await cluster.admin.core.createNamespacedServiceAccountToken({
        namespace,
        name: serviceAccountName,
        body: {
          spec: {
            audiences: [audience],
            expirationSeconds: 600,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid },
          },
        },
      });
      const expiration = res.status?.expirationTimestamp;
      out[audience] = {
        token: res.status?.token ?? '',
        expirationTimestamp: expiration instanceof Date ? expiration.toISOString() : String(expiration),
      };
    }
    return JSON.stringify(out);
  }

  return {
    name,
    namespace,
    uid,
    volumeId,
    targetPath,
    async publishRequest() {
      const context = inlineVolumeContext({ name, namespace, uid, serviceAccountName }, spc);
      const minted = await tokens();
      if (minted !== undefined) context[TOKENS_KEY] = minted;
      return inlinePublishRequest(volumeId, targetPath, context, { ...options.nodePublishSecret });
    },
  };
}
