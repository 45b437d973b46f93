// Shared set-up of the RBAC integration tests: the CSIDriver object with upstream's Helm
// values, pods with inline volumes, events and API request counts as the driver sees them.
import type { Obj } from './deploy-manifests.js';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { parseDriverConfig, type DriverConfig } from '../../driver/config.js';
import type { KubeCluster } from './kube-cluster.js';
import { TEST_AUDIENCE } from './kube-objects.js';
import { until } from './until.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** A path in our deploy/ directory. */
export function deployFile(relative: string): string {
  return join(REPO, 'deploy', relative);
}

export { TEST_AUDIENCE } from './kube-objects.js';

/**
 * Makes the shared CSIDriver look like upstream's Helm chart renders it with
 * `enableSecretRotation: true` and `tokenRequests`: requiresRepublish true, one token
 * audience. Other test files create it with the same audience; an existing one is
 * only switched to requiresRepublish (which the driver ignores in reconciler mode).
 */
export async function ensureCsiDriverLikeUpstreamHelm(cluster: KubeCluster): Promise<void> {
  const ref = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'secrets-store.csi.k8s.io' } };
  const existing = await cluster.admin.objects.read(ref as never).then(
    (o) => o as unknown as { spec: Record<string, unknown>; metadata: Record<string, unknown> },
    () => undefined,
  );
  if (!existing) {
    await cluster.admin.objects.create({
      ...ref,
      spec: {
        podInfoOnMount: true,
        attachRequired: false,
        volumeLifecycleModes: ['Ephemeral'],
        requiresRepublish: true,
        tokenRequests: [{ audience: TEST_AUDIENCE }],
      },
    } as never);
  } else if (existing.spec['requiresRepublish'] !== true) {
    await cluster.admin.objects.replace({ ...existing, spec: { ...existing.spec, requiresRepublish: true } } as never);
  }
}

/** Events on one pod, as `Type Reason: message`. */
export async function podEvents(cluster: KubeCluster, namespace: string, pod: string): Promise<string[]> {
  return (await cluster.admin.core.listNamespacedEvent({ namespace })).items
    .filter((e) => e.involvedObject.name === pod)
    .map((e) => `${e.type} ${e.reason}: ${e.message}`);
}

/**
 * Waits for the first event on `pod` that `matches` (as `Type Reason: message`). The
 * driver logs a failure before it writes the event, so a test that awaited the log line
 * must wait for the event too.
 */
export async function untilPodEvent(
  cluster: KubeCluster,
  namespace: string,
  pod: string,
  matches: (event: string) => boolean,
): Promise<string> {
  return (
    await until(`an event on pod ${namespace}/${pod}`, async () =>
      (await podEvents(cluster, namespace, pod)).find(matches),
    )
  ).value;
}

/**
 * A pod on the driver's node (test-node) with one inline volume of our driver per class
 * (named after it), each with `nodePublishSecretRef` when `secretRef` names a Secret.
 */
export async function createPodWithVolumes(
  cluster: KubeCluster,
  namespace: string,
  name: string,
  classes: readonly string[],
  extra: Record<string, unknown> = {},
  secretRef?: string,
): Promise<string> {
  const pod = await cluster.admin.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, ...extra },
      spec: {
        nodeName: 'test-node',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: classes.map((spc) => ({
          name: spc,
          csi: {
            driver: 'secrets-store.csi.k8s.io',
            readOnly: true,
            volumeAttributes: { secretProviderClass: spc },
            ...(secretRef === undefined ? {} : { nodePublishSecretRef: { name: secretRef } }),
          },
        })),
      },
    },
  });
  return pod.metadata?.uid ?? '';
}

/** A token for the pod's default service account, bound to the pod, as kubelet mints it for tokenRequests (the volume attribute's JSON). */
export async function kubeletTokens(
  cluster: KubeCluster,
  namespace: string,
  pod: string,
  uid: string,
): Promise<string> {
  const t = await cluster.admin.core.createNamespacedServiceAccountToken({
    name: 'default',
    namespace,
    body: {
      spec: {
        audiences: [TEST_AUDIENCE],
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod, uid },
      },
    },
  });
  return JSON.stringify({
    [TEST_AUDIENCE]: { token: t.status?.token, expirationTimestamp: t.status?.expirationTimestamp },
  });
}

/** The driver's API requests by method so far (rest_client_requests_total, all codes). */
export function requestsByMethod(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^rest_client_requests_total\{([^}]*)\} (\d+)$/gm)) {
    const method = /method="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '?';
    out[method] = (out[method] ?? 0) + Number(m[2]);
  }
  return out;
}

/** The driver container's flags in deploy/driver-daemonset.yaml, parsed as the driver would (node name filled in). */
export async function daemonSetConfig(): Promise<{ args: string[]; config: DriverConfig }> {
  const docs = parseAllDocuments(await readFile(deployFile('driver-daemonset.yaml'), 'utf8')).map(
    (d) => d.toJS() as Obj,
  );
  const ds = docs.find((d) => d?.['kind'] === 'DaemonSet');
  const container = (ds?.['spec'].template.spec.containers as Obj[]).find((c) => c['name'] === 'secrets-store');
  const env: Record<string, string> = { KUBE_NODE_NAME: 'test-node' };
  for (const e of (container?.['env'] ?? []) as Record<string, string>[])
    if (typeof e['value'] === 'string') env[e['name'] ?? ''] = e['value'];
  const args = (container?.['args'] as string[]).map((a) =>
    a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m),
  );
  return { args, config: parseDriverConfig(args, {}) };
}
