import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import {
  localSyncControllerArgs,
  localSyncControllerEnv,
  SYNC_CONTROLLER_SA,
  SYNC_CONTROLLER_STARTED,
  writeSyncControllerKubeconfig,
} from '../../bin/local-sync-controller.js';
import { connectKubeApi } from '../../driver/k8s/client/connect.js';
import { readManifests, type KubeCluster } from './kube-cluster.js';
import { parseMetrics } from './provider-process.js';
import { statusOf, until } from './until.js';

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

/** The sync controller's user name in the audit log. */
export const SYNC_CONTROLLER_USER = `system:serviceaccount:${SYNC_CONTROLLER_SA.namespace}:${SYNC_CONTROLLER_SA.name}`;

/** A running sync controller with the file provider as its provider, each in its own process. */
export interface SyncControllerStack {
  readonly controller: Child;
  /** The file provider's root: write files here to change what it serves. */
  readonly providerRoot: string;
  /** The directory of provider sockets (another replica can use it). */
  readonly providersDir: string;
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
export async function controllerKubeconfig(cluster: KubeCluster, path: string): Promise<void> {
  const admin = connectKubeApi(join(cluster.dir, 'kubeconfig'), {});
  try {
    await writeSyncControllerKubeconfig(admin, cluster, path);
  } finally {
    admin.close();
  }
}

/** One controller process of a stack: its metrics and probes by the ports it logged. */
export interface SyncControllerReplica {
  readonly controller: Child;
  /** The replica's /metrics as `name{labels}` → value. */
  metrics(): Promise<Map<string, number>>;
  /** GET on the replica's health port. */
  probe(path: string): Promise<number>;
}

/**
 * Starts one controller process with the controller's own token, reading provider
 * sockets from `providersDir`; `podName` is its SYNC_CONTROLLER_POD_NAME.
 */
export async function startSyncControllerReplica(
  cluster: KubeCluster,
  providersDir: string,
  args: readonly string[],
  podName = 'ssc-0',
): Promise<SyncControllerReplica> {
  const home = await mkdtemp(join(tmpdir(), 'ssc-syncctl-replica-'));
  try {
    await controllerKubeconfig(cluster, join(home, 'kubeconfig'));
    const controller = await startCli(
      localSyncControllerArgs(providersDir, join(home, 'kubeconfig'), args),
      SYNC_CONTROLLER_STARTED,
      { env: localSyncControllerEnv(home, { name: podName, uid: `u-${podName}` }) },
    );
    const port = (name: string) => new RegExp(`"${name}":(\\d+)`).exec(controller.stderr())?.[1];
    const stop = controller.stop.bind(controller);
    return {
      controller: {
        process: controller.process,
        stderr: () => controller.stderr(),
        async stop(graceMs?: number) {
          const code = await stop(graceMs);
          await rm(home, { recursive: true, force: true });
          return code;
        },
      },
      async metrics() {
        const res = await fetch(`http://127.0.0.1:${port('metricsPort')}/metrics`);
        return parseMetrics(await res.text());
      },
      async probe(path) {
        return (await fetch(`http://127.0.0.1:${port('healthPort')}${path}`)).status;
      },
    };
  } catch (err) {
    await rm(home, { recursive: true, force: true });
    throw err;
  }
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
    const replica = await startSyncControllerReplica(cluster, providersDir, args);
    children.push(replica.controller);
    return { ...replica, providerRoot, providersDir, stop };
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
