// One Kubernetes node for the end-to-end tests: its own control plane (etcd +
// kube-apiserver, kube-controller-manager with the garbage collector, service-account
// token and root-CA publisher controllers), containerd, a real kubelet, our driver and file
// provider on the host as root, and the plugin registration stand-in. Everything lives in
// one temp dir; test/e2e/cleanup-node.sh tears it down on stop() and on process exit
// (also a failed test or SIGINT), restoring the sysctls kubelet changed.
import { StorageV1Api } from '@kubernetes/client-node';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startControllerManager, type ControllerManager } from './controller-manager.js';
import { startDriverStack, type DriverStack } from './driver-stack.js';
import { busyboxImageTar, busyboxStaticVersion, importImage } from './e2e-image.js';
import {
  servePluginRegistration,
  REGISTERED_DRIVER_NAME,
  type PluginRegistration,
  type RegistrationVerdict,
} from './e2e-registration.js';
import {
  containerdConfig,
  containerdSocket,
  createCgroupRoot,
  freePort,
  kubeletConfig,
  readSysctls,
  running,
  spawnDetached,
} from './e2e-runtime.js';
import { readManifests, startKubeCluster, type KubeCluster } from './kube-cluster.js';
import { peerBinary } from './peers.js';
import { until } from './until.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const CLEANUP = join(REPO, 'test/e2e/cleanup-node.sh');

/** A running test node. */
export interface E2eNode {
  readonly cluster: KubeCluster;
  readonly nodeName: string;
  readonly dir: string;
  /** kubelet's --root-dir. */
  readonly rootDir: string;
  readonly podLogsDir: string;
  /** The running driver and file provider (a new driver after restartDriver). */
  readonly stack: DriverStack;
  /** Milliseconds from kubelet's start to the driver's registration on the node. */
  readonly registeredMs: number;
  /** The last lines of a component's log (kubelet, containerd) for failure messages. */
  logTail(component: 'kubelet' | 'containerd', lines?: number): Promise<string>;
  /**
   * Restarts the driver as a DaemonSet pod restart would, the provider, kubelet and the
   * registration left running: SIGTERM (a rollout) or SIGKILL (a crash), then a new
   * driver process with the same flags on the same socket. Resolves once it has started.
   */
  restartDriver(signal: 'SIGTERM' | 'SIGKILL'): Promise<DriverStack>;
  stop(): Promise<void>;
}

function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(':').some((d) => d && existsSync(join(d, command)));
}

/**
 * Why this machine cannot run the end-to-end tests, or undefined when it can: they need
 * root, cgroup v1 or v2 mounted, containerd, runc, ctr, umoci, busybox-static and the
 * kubelet and kube-controller-manager peers.
 */
export async function e2eSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'not root (kubelet and containerd need root)';
  if (!existsSync('/sys/fs/cgroup/memory') && !existsSync('/sys/fs/cgroup/cgroup.controllers'))
    return 'no cgroups mounted at /sys/fs/cgroup';
  for (const c of ['containerd', 'runc', 'ctr', 'umoci'])
    if (!onPath(c)) return `${c} is not installed (apt-get install containerd runc umoci)`;
  if (!(await busyboxStaticVersion())) return 'busybox-static is not installed (apt-get install busybox-static)';
  for (const p of ['KUBELET', 'KUBE_CONTROLLER_MANAGER', 'ETCD', 'KUBE_APISERVER'])
    if (!peerBinary(p)) return `test peer ${p} is not installed (bash test/peers/install.sh)`;
  return undefined;
}

/** In a before hook: skips the describe, printing why, when this machine cannot run the e2e node (never silently). */
export async function skipUnlessE2eCapable(context: Mocha.Context): Promise<void> {
  const reason = await e2eSkipReason();
  if (!reason) return;
  process.stdout.write(`  skipping the end-to-end tests: ${reason}\n`);
  context.skip();
}

function cleanupSync(dir: string): void {
  try {
    execFileSync('bash', [CLEANUP, dir, '--strays'], { stdio: 'ignore' });
  } catch {
    /* best effort on exit */
  }
}

function cleanup(dir: string): Promise<void> {
  return new Promise((resolve) => execFile('bash', [CLEANUP, dir], () => resolve()));
}

/** SIGINT/SIGTERM end the process through process.exit, so the 'exit' hooks (ours, the cluster's) run. */
function exitOnSignals(): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
}

/** What a test file changes on its node: extra driver flags, CSIDriver spec fields over deploy/csidriver.yaml's. */
export interface E2eNodeOptions {
  readonly driverArgs?: readonly string[];
  readonly csiDriverSpec?: Readonly<Record<string, unknown>>;
}

/** Starts the whole node; resolves once kubelet has registered the driver (CSINode lists it). */
export async function startE2eNode(options: E2eNodeOptions = {}): Promise<E2eNode> {
  const kubelet = peerBinary('KUBELET') ?? '';
  const dir = await mkdtemp(join(tmpdir(), 'ssc-e2e-'));
  const nodeName = `ssc-e2e-${randomBytes(3).toString('hex')}`;
  const rootDir = join(dir, 'kubelet');
  const podLogsDir = join(dir, 'pod-logs');
  const cgroupRoot = `/${nodeName}`;
  let clusterDir: string | undefined;
  // On exit (a failed or interrupted run): the node torn down, then the cluster, then both dirs.
  const exitHook = (): void => {
    cleanupSync(dir);
    if (clusterDir) {
      try {
        execFileSync('bash', [join(REPO, 'test/peers/kube/stop-cluster.sh'), clusterDir], { stdio: 'ignore' });
      } catch {
        /* already stopped */
      }
    }
    for (const d of [dir, clusterDir]) if (d) rmSync(d, { recursive: true, force: true });
  };
  process.once('exit', exitHook);
  const removeSignals = exitOnSignals();
  let cluster: KubeCluster | undefined;
  let manager: ControllerManager | undefined;
  let stack: DriverStack | undefined;
  let registration: PluginRegistration | undefined;
  const stop = async () => {
    await registration?.stop();
    await cleanup(dir);
    await stack?.stop().catch(() => undefined);
    await manager?.stop();
    await cluster?.stop();
    await cleanup(dir);
    await rm(dir, { recursive: true, force: true });
    process.removeListener('exit', exitHook);
    removeSignals();
  };
  const logTail = async (component: 'kubelet' | 'containerd', lines = 40) =>
    (await readFile(join(dir, `${component}.log`), 'utf8').catch(() => '')).split('\n').slice(-lines).join('\n');
  try {
    cluster = await startKubeCluster();
    clusterDir = cluster.dir;
    for (const obj of await readManifests(join(REPO, 'deploy/csidriver.yaml'))) {
      const spec = { ...(obj as { spec?: Record<string, unknown> }).spec, ...options.csiDriverSpec };
      await cluster.admin.objects.create({ ...obj, spec } as typeof obj);
    }
    manager = await startControllerManager(cluster, [
      'garbage-collector-controller',
      'serviceaccount-token-controller',
      'root-ca-certificate-publisher-controller',
    ]);

    // containerd and the image.
    await mkdir(join(dir, 'containerd'), { recursive: true });
    await writeFile(join(dir, 'containerd', 'config.toml'), containerdConfig(dir));
    const tar = await busyboxImageTar();
    const containerdPid = await spawnDetached(
      'containerd',
      ['--config', join(dir, 'containerd', 'config.toml')],
      join(dir, 'containerd.log'),
      join(dir, 'containerd.pid'),
    );
    await until(
      'containerd to serve its socket',
      async () => {
        if (!(await running(containerdPid))) throw new Error(`containerd exited:\n${await logTail('containerd')}`);
        return existsSync(containerdSocket(dir));
      },
      30_000,
    );
    await importImage(containerdSocket(dir), tar);

    // The driver and file provider, the driver's socket where the registration points kubelet.
    const pluginDir = join(rootDir, 'plugins', REGISTERED_DRIVER_NAME);
    await mkdir(pluginDir, { recursive: true });
    const driverArgs = [`--nodeid=${nodeName}`, ...(options.driverArgs ?? [])];
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      work: pluginDir,
      providerFiles: { README: 'secrets of the e2e tests\n' },
      driverArgs,
    });
    await mkdir(join(rootDir, 'plugins_registry'), { recursive: true });
    registration = await servePluginRegistration(
      join(rootDir, 'plugins_registry', `${REGISTERED_DRIVER_NAME}-reg.sock`),
      stack.socketPath,
    );

    // kubelet: sysctls saved first, its cgroup root made (and removed by the cleanup).
    await writeFile(join(dir, 'sysctls.saved'), await readSysctls());
    await writeFile(join(dir, 'cgroup-root'), cgroupRoot);
    await createCgroupRoot(cgroupRoot);
    await mkdir(podLogsDir, { recursive: true });
    const port = await freePort();
    await writeFile(
      join(dir, 'kubelet-config.json'),
      kubeletConfig({ dir, rootDir, podLogsDir, cgroupRoot, port }, containerdSocket(dir)),
    );
    const started = Date.now();
    // The admin kubeconfig stands in for node credentials: a throwaway test node, no NodeRestriction.
    const kubeletPid = await spawnDetached(
      kubelet,
      [
        `--config=${join(dir, 'kubelet-config.json')}`,
        `--kubeconfig=${join(cluster.dir, 'kubeconfig')}`,
        `--root-dir=${rootDir}`,
        `--cert-dir=${join(dir, 'kubelet-pki')}`,
        `--hostname-override=${nodeName}`,
        '--v=2',
      ],
      join(dir, 'kubelet.log'),
      join(dir, 'kubelet.pid'),
    );
    let verdict: RegistrationVerdict | undefined;
    void registration.verdict.then((v) => {
      verdict = v;
    });
    const outcome = await until(
      "kubelet to answer the driver's registration",
      async () => verdict ?? (!(await running(kubeletPid)) ? 'kubelet exited' : undefined),
      90_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; kubelet log:\n${await logTail('kubelet')}`);
    });
    if (typeof outcome.value === 'string') throw new Error(`${outcome.value}; its log:\n${await logTail('kubelet')}`);
    if (!outcome.value.registered)
      throw new Error(`kubelet refused the driver's registration: ${outcome.value.error}\n${await logTail('kubelet')}`);
    const csiNode = cluster.admin.config.makeApiClient(StorageV1Api);
    await until(
      'the CSINode object to list the driver',
      async () =>
        (await csiNode.readCSINode({ name: nodeName })).spec?.drivers?.some((d) => d.name === REGISTERED_DRIVER_NAME),
      60_000,
    );
    const registeredMs = Date.now() - started;
    const restartDriver = async (signal: 'SIGTERM' | 'SIGKILL'): Promise<DriverStack> => {
      const old = stack as DriverStack;
      const exited = new Promise<void>((resolve) => {
        if (old.driver.process.exitCode !== null || old.driver.process.signalCode !== null) resolve();
        else old.driver.process.once('exit', () => resolve());
      });
      if (signal === 'SIGKILL') old.driver.process.kill('SIGKILL');
      else await old.driver.stop();
      await exited;
      // The new stack's stop() stops the old one too (its file provider, its work dir).
      stack = await startDriverStack({ kubeconfig: cluster?.driverKubeconfig, reuse: old, driverArgs });
      return stack;
    };
    return {
      cluster,
      nodeName,
      dir,
      rootDir,
      podLogsDir,
      registeredMs,
      logTail,
      stop,
      restartDriver,
      get stack() {
        return stack as DriverStack;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
