// Objects the Kubernetes-mode tests create as a user, an installer or a controller would:
// classes, the shared CSIDriver object, pods and their owners; and the pod status objects a
// driver writes, as a test reads them.
import type { KubeCluster } from './kube-cluster.js';

/** The secrets-store API group and version, as client-node's custom object calls take them. */
export const SECRETS_STORE_GROUP = { group: 'secrets-store.csi.x-k8s.io', version: 'v1' } as const;

/** A SecretProviderClassPodStatus as the tests read it: upstream's fields, and our optional ones. */
export interface PodStatusObject {
  metadata: {
    name: string;
    uid: string;
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
    lastMountTime?: string;
    lastError?: string;
    secretSyncError?: string;
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
    ...SECRETS_STORE_GROUP,
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

/** Our driver's CSIDriver object as deploy/csidriver.yaml has it, with tokenRequests for `tokenAudiences` (none: left out). */
export function csiDriverObject(tokenAudiences: readonly string[] = []): object {
  const tokenRequests = tokenAudiences.map((audience) => ({ audience }));
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: 'secrets-store.csi.k8s.io' },
    spec: {
      podInfoOnMount: true,
      attachRequired: false,
      volumeLifecycleModes: ['Ephemeral'],
      ...(tokenRequests.length > 0 ? { tokenRequests } : {}),
    },
  };
}

/**
 * Creates the shared cluster's CSIDriver object for our driver with TEST_AUDIENCE in
 * tokenRequests (rotation mints tokens for it); one that exists already is left alone.
 */
export async function createTestCsiDriver(cluster: KubeCluster): Promise<void> {
  await cluster.admin.objects.create(csiDriverObject([TEST_AUDIENCE]) as never).catch(() => undefined);
}

/**
 * Deployment `name` and its ReplicaSet `<name>-1` (no replicas; pods labelled app=<name>), as
 * the Deployment controller would make them: no controller-manager runs, so tests create the
 * pods themselves, owned by `rs` (uid `rsUid`).
 */
export async function createDeploymentAndReplicaSet(
  cluster: KubeCluster,
  namespace: string,
  name: string,
  templateAnnotations?: Record<string, string>,
): Promise<{ rs: string; rsUid: string }> {
  const template = {
    metadata: { labels: { app: name }, ...(templateAnnotations ? { annotations: templateAnnotations } : {}) },
    spec: { containers: [{ name: 'c', image: 'busybox' }] },
  };
  const deploy = (await cluster.admin.objects.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas: 0, selector: { matchLabels: { app: name } }, template },
  } as never)) as { metadata: { uid: string } };
  const rs = (await cluster.admin.objects.create({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${name}-1`,
      namespace,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name, uid: deploy.metadata.uid, controller: true },
      ],
    },
    spec: { replicas: 0, selector: { matchLabels: { app: name } }, template },
  } as never)) as { metadata: { uid: string } };
  return { rs: `${name}-1`, rsUid: rs.metadata.uid };
}

/**
 * Pod `name`: one busybox container, no volume, on no node (nothing runs it). What a test
 * needs when it publishes the pod's volume itself, as kubelet would; returns its uid.
 */
export async function createBarePod(cluster: KubeCluster, namespace: string, name: string): Promise<string> {
  const pod = await cluster.admin.core.createNamespacedPod({
    namespace,
    body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  });
  return pod.metadata?.uid ?? '';
}
