import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { KubeCluster } from '../test/support/kube-cluster.js';
import { csiDriverObject } from '../test/support/kube-objects.js';
import { peerBinary } from '../test/support/peers.js';

/**
 * The rotation benchmark's Kubernetes mode: the same real etcd + kube-apiserver the
 * integration tests use (test/peers/install.sh builds them, test/support/kube-cluster.ts
 * starts them and installs deploy/'s CRDs and RBAC), so API writes and Events of a round
 * can be counted instead of reported as n/a.
 */

/** Why Kubernetes mode cannot run here, or undefined when it can. */
export function kubernetesUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (tmpfs mounts; --mount-mode=dir is local mode only)';
  if (!peerBinary('ETCD') || !peerBinary('KUBE_APISERVER'))
    return 'etcd and kube-apiserver are not installed: run bash test/peers/install.sh';
  return undefined;
}

/** Requests the driver may make that change the cluster (kube-apiserver's verbs). */
const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);
/** kube-apiserver renews its own leases on a timer: not the driver's writes. */
const IGNORED_RESOURCES = new Set(['leases']);

/** Sum of apiserver_request_total over write verbs, by resource, from /metrics text. */
function apiWritesByResource(metricsText: string): Record<string, number> {
  const byResource: Record<string, number> = {};
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const resource = labels['subresource']
      ? `${labels['resource']}/${labels['subresource']}`
      : (labels['resource'] ?? '');
    if (
      !WRITE_VERBS.has(labels['verb'] ?? '') ||
      IGNORED_RESOURCES.has(labels['resource'] ?? '') ||
      !Number.isFinite(value)
    )
      continue;
    byResource[resource] = (byResource[resource] ?? 0) + value;
  }
  return byResource;
}

/** A started cluster with a namespace, a SecretProviderClass, the CSIDriver, and helpers the benchmark needs. */
export interface BenchCluster {
  readonly kubeconfig: string;
  readonly namespace: string;
  /** The cluster itself (admin clients, URL, CA), for setup a benchmark adds (e.g. a Vault's token reviewer). */
  readonly cluster: KubeCluster;
  /**
   * Creates `count` pods on `nodeName`, each with one CSI volume (VOLUME_NAME) of `spcName`,
   * running as `serviceAccountName` (default `default`).
   */
  createPods(
    count: number,
    nodeName: string,
    spcName: string,
    volumeName: string,
    prefix: string,
    serviceAccountName?: string,
  ): Promise<BenchClusterPod[]>;
  /**
   * The `csi.storage.k8s.io/serviceAccount.tokens` attribute kubelet passes for `pod`: one
   * TokenRequest per audience, bound to the pod (as kubelet mints them for tokenRequests).
   */
  serviceAccountTokens(pod: BenchClusterPod, audiences: readonly string[], expirationSeconds?: number): Promise<string>;
  /** Write requests kube-apiserver has served so far, by resource (leases left out). */
  apiWrites(): Promise<Record<string, number>>;
  /** Events in the namespace. */
  eventCount(): Promise<number>;
  stop(): Promise<void>;
}

/** A pod createPods made. */
export interface BenchClusterPod {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly serviceAccountName: string;
}

/** What a benchmark's namespace holds besides its pods. */
export interface BenchClusterSetup {
  readonly spcName: string;
  /** The SecretProviderClass's spec. */
  readonly classSpec: Record<string, unknown>;
  /** Audiences of the CSIDriver's tokenRequests (rotation mints tokens for them); none by default. */
  readonly tokenAudiences?: readonly string[];
  /** ServiceAccounts to create in the namespace besides `default`. */
  readonly serviceAccounts?: readonly string[];
}

function getText(url: string, token: string, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body) : reject(new Error(`GET ${url}: HTTP ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Starts the cluster and prepares one namespace: a SecretProviderClass for the file
 * provider whose objects are synced into one Secret (so rounds exercise Secret sync), and
 * the CSIDriver object rotation reads (no tokenRequests).
 */
export function startBenchCluster(
  spcName: string,
  objectsYaml: string,
  objectNames: readonly string[],
): Promise<BenchCluster> {
  return startBenchClusterWith({
    spcName,
    classSpec: {
      provider: 'file',
      parameters: { objects: objectsYaml },
      secretObjects: [
        {
          secretName: `${spcName}-synced`,
          type: 'Opaque',
          data: objectNames.map((objectName) => ({ objectName, key: objectName })),
        },
      ],
    },
  });
}

/** Creates `body` at `path` with `api`, taking an existing object (409) as created: a benchmark step may be re-run on the same cluster. */
export async function createIgnoringConflict(api: KubeApi, path: string, body: unknown): Promise<void> {
  await api.create(path, body).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
}

/**
 * Has kube-apiserver run a garbage collection (Go's heap profile endpoint with gc=1, on by
 * default with --profiling), so the Go memory its /metrics report next is live data.
 */
export async function apiserverCollectGarbage(
  cluster: Pick<KubeCluster, 'url' | 'adminToken'>,
  ca: Buffer,
): Promise<void> {
  await getText(`${cluster.url}/debug/pprof/heap?gc=1`, cluster.adminToken, ca);
}

/** kube-apiserver's own /metrics text (`ca`: the cluster CA's PEM, read once by the caller). */
export function apiserverMetrics(cluster: Pick<KubeCluster, 'url' | 'adminToken'>, ca: Buffer): Promise<string> {
  return getText(`${cluster.url}/metrics`, cluster.adminToken, ca);
}

/**
 * Creates the CSIDriver object rotation reads (with tokenRequests for `tokenAudiences`).
 * Create it before a driver starts: the driver reads the CSIDriver once and caches it.
 */
export async function createCsiDriver(cluster: KubeCluster, tokenAudiences: readonly string[] = []): Promise<void> {
  await cluster.admin.objects.create(csiDriverObject(tokenAudiences) as never);
}

/** Creates the SecretProviderClass `name` in `namespace` with `spec`. */
export async function createSecretProviderClass(
  cluster: KubeCluster,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await cluster.admin.custom.createNamespacedCustomObject({
    group: 'secrets-store.csi.x-k8s.io',
    version: 'v1',
    namespace,
    plural: 'secretproviderclasses',
    body: { apiVersion: 'secrets-store.csi.x-k8s.io/v1', kind: 'SecretProviderClass', metadata: { name }, spec },
  });
}

/** What createBenchPods makes: `count` pods named `<prefix>-<i>` on `nodeName`, each with one CSI volume of `spcName`. */
export interface BenchPodsSpec {
  readonly count: number;
  readonly nodeName: string;
  readonly spcName: string;
  readonly volumeName: string;
  readonly prefix: string;
  /** Default `default`. */
  readonly serviceAccountName?: string;
  /** The volume's nodePublishSecretRef Secret, if any. */
  readonly nodePublishSecretRef?: string;
}

/** Creates pods in `namespace` as `spec` says, 8 at a time (as the scheduler would have bound them: spec.nodeName set). */
export async function createBenchPods(
  cluster: KubeCluster,
  namespace: string,
  spec: BenchPodsSpec,
): Promise<BenchClusterPod[]> {
  const { count, nodeName, spcName, volumeName, prefix, nodePublishSecretRef } = spec;
  const serviceAccountName = spec.serviceAccountName ?? 'default';
  const pods: BenchClusterPod[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const name = `${prefix}-${next++}`;
      const pod = await cluster.admin.core.createNamespacedPod({
        namespace,
        body: {
          metadata: { name },
          spec: {
            nodeName,
            serviceAccountName,
            containers: [{ name: 'app', image: 'app' }],
            volumes: [
              {
                name: volumeName,
                csi: {
                  driver: 'secrets-store.csi.k8s.io',
                  readOnly: true,
                  volumeAttributes: { secretProviderClass: spcName },
                  ...(nodePublishSecretRef ? { nodePublishSecretRef: { name: nodePublishSecretRef } } : {}),
                },
              },
            ],
          },
        },
      });
      pods.push({ name, namespace, uid: pod.metadata?.uid ?? '', serviceAccountName });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return pods;
}

/**
 * Starts the cluster and prepares one namespace as `setup` says: its ServiceAccounts, the
 * SecretProviderClass, and the CSIDriver object (with tokenRequests for `tokenAudiences`).
 * Create it before the driver starts: the driver reads the CSIDriver once and caches it.
 */
export async function startBenchClusterWith(setup: BenchClusterSetup): Promise<BenchCluster> {
  // Loaded here, not at the top: local-mode runs never load the Kubernetes client.
  const { createNamespace, startKubeCluster } = await import('../test/support/kube-cluster.js');
  const cluster: KubeCluster = await startKubeCluster();
  try {
    const ca = await readFile(cluster.caFile);
    const namespace = await createNamespace(cluster, 'bench');
    for (const name of setup.serviceAccounts ?? [])
      await cluster.admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    await createCsiDriver(cluster, setup.tokenAudiences);
    await createSecretProviderClass(cluster, namespace, setup.spcName, setup.classSpec);
    return {
      kubeconfig: cluster.driverKubeconfig,
      namespace,
      cluster,
      createPods: (count, nodeName, spc, volumeName, prefix, serviceAccountName = 'default') =>
        createBenchPods(cluster, namespace, { count, nodeName, spcName: spc, volumeName, prefix, serviceAccountName }),
      async serviceAccountTokens(pod, audiences, expirationSeconds = 3600) {
        const out: Record<string, { token: string; expirationTimestamp: string }> = {};
        for (const audience of audiences) {
          const res = await cluster.admin.core.createNamespacedServiceAccountToken({
            namespace: pod.namespace,
            name: pod.serviceAccountName,
            body: {
              spec: {
                audiences: [audience],
                expirationSeconds,
                boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid },
              },
            },
          });
          const token = res.status?.token;
          if (!token)
            throw new Error(
              `TokenRequest for pod ${pod.namespace}/${pod.name} (audience ${audience}) returned no token`,
            );
          out[audience] = {
            token,
            expirationTimestamp: new Date(res.status?.expirationTimestamp ?? Date.now()).toISOString(),
          };
        }
        return JSON.stringify(out);
      },
      apiWrites: async () => apiWritesByResource(await apiserverMetrics(cluster, ca)),
      eventCount: async () => (await cluster.admin.core.listNamespacedEvent({ namespace })).items.length,
      stop: () => cluster.stop(),
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
