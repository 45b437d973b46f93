// A real control plane for integration tests: etcd + kube-apiserver built from the Go
// module proxy by test/peers/install.sh and started on loopback by
// test/peers/kube/start-cluster.sh (through bin/local-control-plane.ts). No controller-manager, scheduler or kubelet runs:
// tests create ServiceAccounts, Pods and owners themselves, and nothing garbage-collects.
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  startControlPlane,
  stopControlPlane,
  stopControlPlaneSync,
  writeTokenKubeconfig,
} from '../../bin/local-control-plane.js';

export { writeTokenKubeconfig } from '../../bin/local-control-plane.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** The driver's identity: the ServiceAccount our deploy/rbac*.yaml bind. */
export const DRIVER_USER = 'system:serviceaccount:kube-system:secrets-store-csi-driver';

/** A running test cluster with an admin client and a driver kubeconfig bound by our real RBAC. */
export interface KubeCluster {
  readonly dir: string;
  readonly url: string;
  /** The system:masters token (for raw requests such as /metrics) and the cluster CA file. */
  readonly adminToken: string;
  readonly caFile: string;
  /** Admin (system:masters) clients for test setup and assertions. */
  readonly admin: { config: KubeConfig; core: CoreV1Api; custom: CustomObjectsApi; objects: KubernetesObjectApi };
  /** Kubeconfig for the driver: token of DRIVER_USER, authorised only by the RBAC of deploy/kustomization.yaml. */
  readonly driverKubeconfig: string;
  /** The API server's audit log: JSON lines, one per request of a service account (start-cluster.sh). */
  readonly auditLog: string;
  stop(): Promise<void>;
}

/** Every object in a YAML file. */
export async function readManifests(path: string): Promise<KubernetesObject[]> {
  return parseAllDocuments(await readFile(path, 'utf8'))
    .map((d) => d.toJS() as KubernetesObject)
    .filter((o) => o && typeof o === 'object');
}

/** The RBAC files deploy/kustomization.yaml applies (rbac*.yaml, role-*.yaml), in its order. */
export async function kustomizationRbacFiles(): Promise<string[]> {
  const kustomization = parseAllDocuments(
    await readFile(join(REPO, 'deploy/kustomization.yaml'), 'utf8'),
  )[0]?.toJS() as { resources?: string[] } | undefined;
  return (kustomization?.resources ?? []).filter((f) => /^(rbac|role-)[^/]*\.yaml$/.test(f));
}

/**
 * The deploy/ manifests the driver needs in a cluster: CRDs and the RBAC the default
 * kustomization applies (not the DaemonSets, not the opt-in workload-restart role).
 */
async function clusterManifests(): Promise<KubernetesObject[]> {
  const objects: KubernetesObject[] = [];
  for (const f of (await readdir(join(REPO, 'deploy/crds'))).sort())
    objects.push(...(await readManifests(join(REPO, 'deploy/crds', f))));
  for (const f of await kustomizationRbacFiles()) objects.push(...(await readManifests(join(REPO, 'deploy', f))));
  return objects;
}

/**
 * Applies a deploy/ RBAC file the default kustomization leaves out (rbac-workload-restart.yaml),
 * as a user who opts in would; objects that already exist are kept.
 */
export async function applyOptInRbac(cluster: KubeCluster, file: string): Promise<void> {
  for (const obj of await readManifests(join(REPO, 'deploy', file))) {
    await cluster.admin.objects.create(obj).catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });
  }
}

async function waitForCrds(admin: KubeCluster['admin']): Promise<void> {
  // CRDs are served a moment after creation: poll discovery (an API condition, not a timer).
  for (let i = 0; i < 200; i++) {
    try {
      await admin.custom.listClusterCustomObject({
        group: 'secrets-store.csi.x-k8s.io',
        version: 'v1',
        plural: 'secretproviderclasspodstatuses',
      });
      await admin.custom.listClusterCustomObject({
        group: 'secrets-store.csi.x-k8s.io',
        version: 'v1',
        plural: 'secretproviderclasses',
      });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('CRDs were not served within 10s');
}

/** Options of startKubeCluster. */
export interface KubeClusterOptions {
  /** Install deploy/'s CRDs and RBAC (default true); false leaves the cluster bare, e.g. for a Helm install. */
  readonly installManifests?: boolean;
}

/** Starts a cluster, installs our CRDs and RBAC (unless told not to), and writes the driver's kubeconfig. */
export async function startKubeCluster(options: KubeClusterOptions = {}): Promise<KubeCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'ssc-kube-'));
  const driverToken = randomBytes(24).toString('hex');
  await writeFile(
    join(dir, 'extra-tokens.csv'),
    `${driverToken},${DRIVER_USER},driver-uid,"system:serviceaccounts,system:serviceaccounts:kube-system,system:authenticated"\n`,
  );
  let started = false;
  try {
    const plane = await startControlPlane(dir);
    started = true;
    const config = new KubeConfig();
    config.loadFromFile(join(dir, 'kubeconfig'));
    const admin = {
      config,
      core: config.makeApiClient(CoreV1Api),
      custom: config.makeApiClient(CustomObjectsApi),
      objects: KubernetesObjectApi.makeApiClient(config),
    };
    if (options.installManifests !== false) {
      for (const obj of await clusterManifests()) await admin.objects.create(obj);
      await waitForCrds(admin);
    }
    const driverKubeconfig = join(dir, 'driver-kubeconfig');
    await writeTokenKubeconfig(driverKubeconfig, plane, 'driver', driverToken);
    return {
      dir,
      url: plane.url,
      adminToken: plane.adminToken,
      caFile: plane.caFile,
      admin,
      driverKubeconfig,
      auditLog: plane.auditLog,
      async stop() {
        await stopControlPlane(dir).catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (started) await stopControlPlane(dir).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Stops the cluster when the test process exits, even when an aborted run skips the after hooks. */
export function stopOnExit(cluster: KubeCluster): void {
  process.once('exit', () => stopControlPlaneSync(cluster.dir));
}

let shared: Promise<KubeCluster> | undefined;

/** One cluster for the whole test run, started on first use (stopped by stopSharedCluster). */
export function sharedKubeCluster(): Promise<KubeCluster> {
  if (!shared) {
    shared = startKubeCluster();
    // The control plane runs detached: make sure an aborted test run does not leak it.
    void shared.then(stopOnExit, () => undefined);
  }
  return shared;
}

/** Stops the shared cluster if one was started (a mocha root afterAll hook). */
export async function stopSharedCluster(): Promise<void> {
  if (!shared) return;
  const cluster = await shared.catch(() => undefined);
  shared = undefined;
  await cluster?.stop();
}

/** A fresh namespace with a default ServiceAccount (no controller-manager creates one). */
export async function createNamespace(cluster: KubeCluster, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await cluster.admin.core.createNamespace({ body: { metadata: { name } } });
  await cluster.admin.core.createNamespacedServiceAccount({ namespace: name, body: { metadata: { name: 'default' } } });
  return name;
}
