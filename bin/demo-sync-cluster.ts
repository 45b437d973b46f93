// demo-sync's local cluster and processes: the test peers it needs, etcd + kube-apiserver
// (local-control-plane.ts), the CRDs and the controller's RBAC applied with kubectl, the
// garbage collector, the file provider serving the example's source Secret as files, and
// the SecretSync controller as the ServiceAccount deploy/sync-controller/rbac.yaml binds.
// Everything is a DemoSession child or teardown: any exit stops it.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectKubeApi } from '../driver/k8s/client/connect.js';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { yamlModule } from '../lib/lazy-yaml.js';
import type { Child } from './child-process.js';
import { line, step } from './demo-output.js';
import type { DemoSession } from './demo-session.js';
import type { Kubectl } from './demo-sync-kube.js';
import {
  controllerManagerArgs,
  GARBAGE_COLLECTOR_READY,
  startControlPlane,
  stopControlPlane,
  type ControlPlane,
} from './local-control-plane.js';
import { peerBinary } from './local-peers.js';
import {
  localSyncControllerArgs,
  localSyncControllerEnv,
  SYNC_CONTROLLER_SA,
  SYNC_CONTROLLER_STARTED,
  writeSyncControllerKubeconfig,
} from './local-sync-controller.js';

/** The test peers demo-sync runs: peers.env key → install.sh name. */
const KUBE_PEERS = Object.freeze({
  ETCD: 'etcd',
  KUBE_APISERVER: 'kube-apiserver',
  KUBE_CONTROLLER_MANAGER: 'kube-controller-manager',
  KUBECTL: 'kubectl',
});

/** Where each peer demo-sync runs is. */
export type KubePeers = Readonly<Record<keyof typeof KUBE_PEERS, string>>;

/** The one line saying which peers are missing and how to get them. */
export function missingPeersMessage(missing: readonly string[]): string {
  return (
    `demo-sync needs the test peers ${missing.join(', ')}, not installed: ` +
    `bash test/peers/install.sh ${missing.join(' ')} builds them (needs Go; about 10 minutes the first time)`
  );
}

/** The peers from the cache (test/peers/install.sh), or an error with missingPeersMessage. */
export function findKubePeers(find: (key: string) => string | undefined = peerBinary): KubePeers {
  const found: Partial<Record<keyof typeof KUBE_PEERS, string>> = {};
  const missing: string[] = [];
  for (const [key, name] of Object.entries(KUBE_PEERS) as [keyof typeof KUBE_PEERS, string][]) {
    const path = find(key);
    if (path) found[key] = path;
    else missing.push(name);
  }
  if (missing.length > 0) throw new Error(missingPeersMessage(missing));
  return found as KubePeers;
}

/** Starts etcd and kube-apiserver in work/cluster; the session stops them once it closes. */
export async function startCluster(session: DemoSession): Promise<{ plane: ControlPlane; admin: KubeApi }> {
  step('starting etcd and kube-apiserver (the test peers)');
  const dir = join(session.work, 'cluster');
  const started = performance.now();
  const starting = startControlPlane(dir);
  // Stopped also when a signal ends the start: the script's own cleanup, then ours.
  session.onClose(async () => {
    await starting.catch(() => undefined);
    await stopControlPlane(dir);
  });
  const plane = await session.step(starting);
  line(`kube-apiserver at ${plane.url}, ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const admin = connectKubeApi(plane.kubeconfig, {});
  session.onClose(async () => admin.close());
  return { plane, admin };
}

/** The SecretProviderClass CRD, and deploy/sync-controller's CRD and RBAC, applied and served. */
export async function installManifests(kubectl: Kubectl, repo: string): Promise<void> {
  step("kubectl apply: the SecretProviderClass CRD, deploy/sync-controller's CRD and RBAC");
  const files = ['deploy/crds/secretproviderclasses.yaml', 'deploy/sync-controller/secretsyncs-crd.yaml'];
  await kubectl(['apply', ...files.flatMap((f) => ['-f', join(repo, f)])]);
  await kubectl(['apply', '-f', join(repo, 'deploy/sync-controller/rbac.yaml')]);
  await kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/secretproviderclasses.secrets-store.csi.x-k8s.io',
    'crd/secretsyncs.secret-sync.x-k8s.io',
  ]);
}

/** kube-controller-manager with only the garbage collector (it deletes a SecretSync's Secret with it). */
export async function startGarbageCollector(session: DemoSession, binary: string, plane: ControlPlane): Promise<void> {
  step('starting kube-controller-manager (only its garbage collector)');
  const env = { PATH: process.env['PATH'] ?? '', HOME: session.work };
  await session.startProgram(
    binary,
    controllerManagerArgs(plane, ['garbage-collector-controller']),
    GARBAGE_COLLECTOR_READY,
    env,
  );
  line('collecting garbage');
}

/** The keys of the example's source Secret (stringData), which the provider serves as files. */
async function sourceFiles(path: string): Promise<Record<string, string>> {
  const doc = yamlModule().parse(await readFile(path, 'utf8')) as { stringData?: Record<string, string> };
  return doc.stringData ?? {};
}

/**
 * Writes the source Secret's keys as files into work/source, as the Secret volume of
 * deploy/sync-controller/deployment.yaml would, and starts the file provider over them.
 */
export async function startFileProvider(session: DemoSession, sourceSecret: string): Promise<string> {
  step('starting the file provider (what deploy/sync-controller runs as a sidecar)');
  const root = join(session.work, 'source');
  await session.step(mkdir(root));
  const files = await session.step(sourceFiles(sourceSecret));
  for (const [key, value] of Object.entries(files)) await session.step(writeFile(join(root, key), value));
  const socket = join(session.work, 'providers', 'file.sock');
  await session.start(
    [
      'provider',
      'file',
      `--endpoint=unix://${socket}`,
      `--root=${root}`,
      `--hmac-key-file=${join(session.work, 'hmac.key')}`,
    ],
    /provider started/,
  );
  line(`serving ${socket}: ${Object.keys(files).join(', ')} (the keys of the example's source Secret, as files)`);
  return root;
}

/** Starts the controller as its ServiceAccount: only deploy/sync-controller/rbac.yaml authorises it. */
export async function startSyncController(session: DemoSession, plane: ControlPlane, admin: KubeApi): Promise<Child> {
  const sa = `${SYNC_CONTROLLER_SA.namespace}/${SYNC_CONTROLLER_SA.name}`;
  step(`starting the SecretSync controller (as the ServiceAccount ${sa})`);
  const kubeconfig = join(session.work, 'sync-controller.kubeconfig');
  await session.step(writeSyncControllerKubeconfig(admin, plane, kubeconfig));
  const args = localSyncControllerArgs(join(session.work, 'providers'), kubeconfig);
  const controller = await session.start(args, SYNC_CONTROLLER_STARTED, localSyncControllerEnv(session.work));
  line('watching SecretSyncs, SecretProviderClasses and the Secrets it manages; polls every 12h (the default)');
  return controller;
}
