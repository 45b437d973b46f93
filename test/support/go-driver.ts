// Upstream's Go driver v1.6.1 (peer `upstream-driver`) with our providers behind it, as a
// user who keeps the Go driver runs them: the driver on a CSI socket in a temp dir, our
// provider processes on <providers dir>/<name>.sock, the shared kube-apiserver holding
// the classes, pods and pod status objects. Tests call it through our kubelet-like CsiClient.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, startProcess, type Child } from '../../bin/child-process.js';
import { CsiClient } from '../../bin/csi-client.js';
import { GO_DRIVER_READY, goDriverArgs } from '../../bench/go-driver-args.js';
import { CAN_MOUNT, unmountAllUnder } from './driver-stack.js';
import { goDriverKubeconfig } from './go-driver-identity.js';
import { createInlinePod, type InlinePod, type InlinePodOptions } from './inline-pod.js';
import type { KubeCluster } from './kube-cluster.js';
import { peerBinary } from './peers.js';

/** Key of the Go driver in peers.env. */
export const GO_DRIVER_PEER = 'UPSTREAM_DRIVER';

/**
 * One of our providers to run behind the Go driver. Adding a provider to this harness is
 * one of these: its name (the socket is <providers dir>/<name>.sock, matched against the
 * class's spec.provider) and its own flags, given the stack's work dir.
 */
export interface GoDriverProvider {
  readonly name: string;
  args?(work: string): readonly string[];
  /** Environment variables added to the provider's (e.g. NODE_EXTRA_CA_CERTS for a stand-in's CA). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Options of startGoDriverStack. */
export interface GoDriverStackOptions {
  readonly cluster: KubeCluster;
  readonly providers: readonly GoDriverProvider[];
  /**
   * Upstream's --enable-secret-rotation: kubelet's requiresRepublish calls then re-mount.
   * The Go driver skips a republish within --rotation-poll-interval of the target's last
   * change; the stack passes 1ms so every republish of a test acts.
   */
  readonly rotation?: boolean;
  /** Called before the processes start, e.g. to fill a provider's source dir. */
  prepare?(work: string): Promise<void>;
}

/** A running Go driver and providers, with kubelet's side of a node. */
export interface GoDriverStack {
  readonly work: string;
  readonly nodeName: string;
  readonly kubeletDir: string;
  readonly client: CsiClient;
  /** The Go driver process now running (a new one after restartDriver()). */
  readonly driver: Child;
  readonly providers: ReadonlyMap<string, Child>;
  /**
   * Starts the Go driver again with the same node name, socket, provider directory and
   * RBAC (what a rollback of the DaemonSet does on a node), after the one running, if any,
   * was stopped; the stack's client reconnects to the socket by itself.
   */
  restartDriver(): Promise<Child>;
  /** Creates a pod bound to this node with an inline volume (see createInlinePod). */
  pod(options: Omit<InlinePodOptions, 'nodeName' | 'kubeletDir'>): Promise<InlinePod>;
  stop(): Promise<void>;
}

/** Why the Go driver cannot run here, or undefined when it can. */
export function goDriverUnavailable(): string | undefined {
  if (!CAN_MOUNT) return 'the Go driver mounts tmpfs with mount(8): needs root';
  if (!peerBinary(GO_DRIVER_PEER))
    return `test peer upstream-driver is not installed (${GO_DRIVER_PEER} missing from peers.env): run bash test/peers/install.sh upstream-driver (needs Go and the module proxy)`;
  return undefined;
}

/** Starts our providers and the Go driver, bound by upstream's RBAC, in a fresh temp dir. */
export async function startGoDriverStack(options: GoDriverStackOptions): Promise<GoDriverStack> {
  const binary = peerBinary(GO_DRIVER_PEER);
  if (!binary) throw new Error(goDriverUnavailable());
  const kubeconfig = await goDriverKubeconfig(options.cluster, binary);
  const work = await mkdtemp(join(tmpdir(), 'ssc-go-'));
  const providersDir = join(work, 'providers');
  const kubeletDir = join(work, 'kubelet');
  const socketPath = join(work, 'csi.sock');
  // Unique per stack: the Go driver's pod and pod-status caches are filtered by node.
  const nodeName = `go-node-${randomBytes(3).toString('hex')}`;
  const children: Child[] = [];
  try {
    await mkdir(providersDir);
    await mkdir(kubeletDir);
    await options.prepare?.(work);
    const providers = new Map<string, Child>();
    for (const p of options.providers) {
      const child = await startCli(
        ['provider', p.name, `--endpoint=unix://${join(providersDir, `${p.name}.sock`)}`, ...(p.args?.(work) ?? [])],
        /provider started/,
        p.env ? { env: { ...process.env, ...p.env } } : {},
      );
      children.push(child);
      providers.set(p.name, child);
    }
    const args = goDriverArgs({ socketPath, nodeName, kubeconfig, providersDir, rotation: options.rotation ?? false });
    let driver = await startProcess(binary, args, GO_DRIVER_READY);
    children.push(driver);
    const client = new CsiClient(socketPath);
    return {
      work,
      nodeName,
      kubeletDir,
      client,
      get driver() {
        return driver;
      },
      async restartDriver() {
        await driver.stop();
        driver = await startProcess(binary, args, GO_DRIVER_READY);
        children.push(driver);
        return driver;
      },
      providers,
      pod: (pod) => createInlinePod(options.cluster, { ...pod, nodeName, kubeletDir }),
      async stop() {
        client.close();
        for (const c of children.reverse()) await c.stop();
        await unmountAllUnder(work);
        await rm(work, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const c of children.reverse()) await c.stop();
    await unmountAllUnder(work);
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}
