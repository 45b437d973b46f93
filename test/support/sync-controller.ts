import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import { readManifests, writeTokenKubeconfig, type KubeCluster } from './kube-cluster.js';
import { parseMetrics } from './provider-process.js';
import { statusOf, until } from './until.js';

/** The sync controller's user name in the audit log. */
/** The SecretSync resource, for the client's custom-object calls. */
export const SECRET_SYNC_RESOURCE = {
  group: 'secret-sync.x-k8s.io',
  version: 'v1alpha1',
  plural: 'secretsyncs',
} as const;

/** A condition of a SecretSync's status, as the tests read it. */
export interface SecretSyncCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export const SYNC_CONTROLLER_USER = 'system:serviceaccount:kube-system:secrets-store-sync-controller';

/** The sync controller's identity, bound by deploy/sync-controller/rbac.yaml. */
const CONTROLLER_SA = { namespace: 'kube-system', name: 'secrets-store-sync-controller' };

/** A running sync controller with the file provider as its provider, each in its own process. */
export interface SyncControllerStack {
  readonly controller: Child;
  /** The file provider's root: write files here to change what it serves. */
  readonly providerRoot: string;
  /** The controller's /metrics as `name{labels}` → value. */
  metrics(): Promise<Map<string, number>>;
  /** GET on the controller's health port. */
  probe(path: string): Promise<number>;
  stop(): Promise<void>;
}

/** Installs deploy/sync-controller's CRD and RBAC once per cluster, and waits until SecretSyncs are served. */
export async function installSyncControllerManifests(cluster: KubeCluster, repo: string): Promise<void> {
  for (const file of ['secretsyncs-crd.yaml', 'rbac.yaml'])
    for (const obj of await readManifests(join(repo, 'deploy/sync-controller', file)))
      await cluster.admin.objects.create(obj).catch((err: unknown) => {
        if (statusOf(err) !== 409) throw err;
      });
  await until('SecretSyncs served', async () => {
    await cluster.admin.custom.listClusterCustomObject({
      group: 'secret-sync.x-k8s.io',
      version: 'v1alpha1',
      plural: 'secretsyncs',
    });
    return true;
  });
}

/** A kubeconfig with a token of the controller's ServiceAccount: only our RBAC authorises it. */
export async function writeSyncControllerKubeconfig(cluster: KubeCluster, path: string): Promise<void> {
  const request = await cluster.admin.core.createNamespacedServiceAccountToken({
    ...CONTROLLER_SA,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  await writeTokenKubeconfig(path, cluster, 'sync-controller', request.status?.token ?? '');
}

/**
 * Starts the file provider over `files` (serving as provider `providerName`: a class names it)
 * and the controller with `args`; cleans up what started if one fails.
 */
export async function startSyncControllerStack(
  cluster: KubeCluster,
  files: Record<string, string>,
  args: readonly string[],
  providerName = 'file',
): Promise<SyncControllerStack> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-syncctl-'));
  const providersDir = join(work, 'providers');
  const providerRoot = join(work, 'root');
  const children: Child[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await child.stop();
    await rm(work, { recursive: true, force: true });
  };
  try {
    await mkdir(providersDir, { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(providerRoot, path)), { recursive: true });
      await writeFile(join(providerRoot, path), text);
    }
    const fileSock = `--endpoint=unix://${join(providersDir, `${providerName}.sock`)}`;
    const hmac = `--hmac-key-file=${join(work, 'hmac.key')}`;
    children.push(await startCli(['provider', 'file', fileSock, `--root=${providerRoot}`, hmac], /provider started/));
    await writeSyncControllerKubeconfig(cluster, join(work, 'kubeconfig'));
    const controller = await startCli(
      [
        'sync-controller',
        `--provider-volume=${providersDir}`,
        `--kubeconfig=${join(work, 'kubeconfig')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        ...args,
      ],
      /sync controller started/,
      {
        env: {
          PATH: process.env['PATH'],
          HOME: work,
          SYNC_CONTROLLER_POD_NAME: 'ssc-0',
          SYNC_CONTROLLER_POD_UID: 'u-1',
        },
      },
    );
    children.push(controller);
    const port = (name: string) => new RegExp(`"${name}":(\\d+)`).exec(controller.stderr())?.[1];
    return {
      controller,
      providerRoot,
      async metrics() {
        const res = await fetch(`http://127.0.0.1:${port('metricsPort')}/metrics`);
        return parseMetrics(await res.text());
      },
      async probe(path) {
        return (await fetch(`http://127.0.0.1:${port('healthPort')}${path}`)).status;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The sum of a metric's series whose labels contain every `label="value"` given. */
export function metricSum(metrics: ReadonlyMap<string, number>, name: string, labels: readonly string[] = []): number {
  let sum = 0;
  for (const [key, value] of metrics)
    if ((key === name || key.startsWith(`${name}{`)) && labels.every((l) => key.includes(l))) sum += value;
  return sum;
}
