// Objects the Kubernetes-mode tests create as a user or an installer would: classes and the
// shared CSIDriver object.
import type { KubeCluster } from './kube-cluster.js';

/** The secrets-store API group and version, as client-node's custom object calls take them. */
export const SECRETS_STORE_GROUP = { group: 'secrets-store.csi.x-k8s.io', version: 'v1' } as const;

/** A SecretProviderClassPodStatus as the tests read it. */
export interface PodStatusObject {
  metadata: {
    resourceVersion: string;
    labels: Record<string, string>;
    ownerReferences: { kind: string; name: string; uid: string }[];
  };
  status: {
    podName: string;
    secretProviderClassName: string;
    mounted: boolean;
    targetPath: string;
    objects: { id: string; version: string }[];
  };
}

/** Reads the pod status object of pod `podName`'s volume of class `spc`: upstream's name, `<pod>-<namespace>-<class>`. */
export async function readPodStatus(
  cluster: KubeCluster,
  namespace: string,
  podName: string,
  spc: string,
): Promise<PodStatusObject> {
  return (await cluster.admin.custom.getNamespacedCustomObject({
    ...SECRETS_STORE_GROUP,
    namespace,
    plural: 'secretproviderclasspodstatuses',
    name: `${podName}-${namespace}-${spc}`,
  })) as PodStatusObject;
}

/** The token audience the shared test CSIDriver requests (other tests rely on exactly this one). */
export const TEST_AUDIENCE = 'vault-test';

/** Creates SecretProviderClass `name` in `namespace`, as `kubectl apply` of its manifest would. */
export async function createSecretProviderClass(
  cluster: KubeCluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  annotations: Record<string, string> = {},
): Promise<void> {
  await cluster.admin.custom.createNamespacedCustomObject({
    group: 'secrets-store.csi.x-k8s.io',
    version: 'v1',
    namespace,
    plural: 'secretproviderclasses',
    body: {
      apiVersion: 'secrets-store.csi.x-k8s.io/v1',
      kind: 'SecretProviderClass',
      metadata: { name, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
      spec,
    },
  });
}

/**
 * Creates the shared cluster's CSIDriver object for our driver with TEST_AUDIENCE in
 * tokenRequests (rotation mints tokens for it); one that exists already is left alone.
 */
export async function createTestCsiDriver(cluster: KubeCluster): Promise<void> {
  await cluster.admin.objects
    .create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: 'secrets-store.csi.k8s.io' },
      spec: {
        podInfoOnMount: true,
        attachRequired: false,
        volumeLifecycleModes: ['Ephemeral'],
        tokenRequests: [{ audience: TEST_AUDIENCE }],
      },
    } as never)
    .catch(() => undefined);
}
