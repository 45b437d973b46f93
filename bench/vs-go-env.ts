import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CsiClient } from '../bin/csi-client.js';
import { objectNames, objectsParameter, writeObjects } from './fixtures.js';
import { GO_DRIVER_READY, goDriverArgs } from './go-driver-args.js';
import { kubernetesUnavailable, startBenchClusterWith, type BenchCluster } from './kube-env.js';
import { BenchProcess, startDriver, startFileProvider } from './processes.js';
import { peerBinary } from '../test/support/peers.js';

/**
 * The side-by-side benchmark's node: one kube-apiserver, one `file` provider (and
 * upstream's Go fake provider serving the same 10 objects), and either driver on demand,
 * each with its own CSI socket, node name and kubelet dir.
 */

/** Which driver a number belongs to. */
export type Side = 'ours' | 'theirs';

/** Objects per volume of the first-publish cases. */
export const SIZES = [1, 10, 100] as const;
export type Size = (typeof SIZES)[number];
const OBJECT_SIZE = 1024;
/** The class served by upstream's fake provider (same 10 objects as `vs-10`). */
export const FAKE_SPC = 'vs-fake-10';
export const spcFor = (size: Size): string => `vs-${size}`;

/** A started driver: ours (Kubernetes mode, the image's node flags) or upstream's Go driver. */
export interface DriverUnderTest {
  readonly side: Side;
  readonly process: BenchProcess;
  readonly client: CsiClient;
  readonly nodeName: string;
  readonly kubeletDir: string;
  stop(): Promise<void>;
}

/** The shared pieces both drivers run against. */
export interface VsGoEnv {
  readonly work: string;
  /** The `file` provider's root and, per size, the object files the class lists (relative to it). */
  readonly providerRoot: string;
  readonly sources: ReadonlyMap<Size, readonly string[]>;
  readonly kube: BenchCluster;
  readonly fileProvider: BenchProcess;
  /** Upstream's Go fake provider, when the Go peers are installed. */
  readonly fakeProvider: BenchProcess | undefined;
  /** Upstream's driver binary and its kubeconfig (bound by upstream's RBAC), when installed. */
  readonly go: { readonly binary: string; readonly kubeconfig: string } | undefined;
  readonly processes: BenchProcess[];
}

/** Why the Go half cannot run here (missing peer), or undefined when it can. */
export function goHalfUnavailable(): string | undefined {
  if (!peerBinary('UPSTREAM_DRIVER'))
    return 'peer upstream-driver is not installed (UPSTREAM_DRIVER missing from peers.env): bash test/peers/install.sh upstream-driver';
  if (!peerBinary('UPSTREAM_FAKE_PROVIDER'))
    return 'peer upstream-fake-provider is not installed (UPSTREAM_FAKE_PROVIDER missing from peers.env)';
  return undefined;
}

/** Why neither half can run (no cluster peers or not root), or undefined. */
export const clusterUnavailable = kubernetesUnavailable;

/** Upstream's fake provider config serving the files under `root` listed by `sources` (names as objectNames gives). */
async function fakeProviderConfig(root: string, sources: readonly string[]): Promise<string> {
  const names = objectNames(sources);
  const files = await Promise.all(
    sources.map(async (s, i) => ({
      path: names[i]!,
      mode: 0o644,
      contents: (await readFile(join(root, s))).toString('base64'),
    })),
  );
  return JSON.stringify({ objects: Object.fromEntries(names.map((n) => [`secret/${n}`, 'v1'])), files });
}

/** Starts the cluster, writes the objects and classes, and starts the providers (the fake one only with `withGo`). */
export async function startVsGoEnv(work: string, withGo: boolean, processes: BenchProcess[]): Promise<VsGoEnv> {
  const providerRoot = join(work, 'provider-root');
  const sources = new Map<Size, string[]>();
  for (const size of SIZES) sources.set(size, await writeObjects(providerRoot, size, OBJECT_SIZE));
  const classSpec = (size: Size) => ({
    provider: 'file',
    parameters: { objects: objectsParameter(sources.get(size)!) },
  });
  const kube = await startBenchClusterWith({ spcName: spcFor(10), classSpec: classSpec(10) });
  const createClass = (name: string, spec: Record<string, unknown>) =>
    kube.cluster.admin.custom.createNamespacedCustomObject({
      group: 'secrets-store.csi.x-k8s.io',
      version: 'v1',
      namespace: kube.namespace,
      plural: 'secretproviderclasses',
      body: { apiVersion: 'secrets-store.csi.x-k8s.io/v1', kind: 'SecretProviderClass', metadata: { name }, spec },
    });
  for (const size of SIZES) if (size !== 10) await createClass(spcFor(size), classSpec(size));
  await createClass(FAKE_SPC, {
    provider: 'upstream-fake',
    parameters: { objects: objectsParameter(sources.get(10)!) },
  });
  const providersDir = join(work, 'providers');
  await mkdir(providersDir, { recursive: true });
  const fileProvider = await startFileProvider(work, providerRoot, cpuProfDir());
  processes.push(fileProvider);
  let fakeProvider: BenchProcess | undefined;
  let go: VsGoEnv['go'];
  if (withGo) {
    const binary = peerBinary('UPSTREAM_DRIVER')!;
    const configPath = join(work, 'fake-provider.json');
    await writeFile(configPath, await fakeProviderConfig(providerRoot, sources.get(10)!));
    fakeProvider = await BenchProcess.startBinary(
      'Go fake provider',
      peerBinary('UPSTREAM_FAKE_PROVIDER')!,
      ['--endpoint', `unix://${join(providersDir, 'upstream-fake.sock')}`, '--config', configPath],
      /listening on/,
    );
    processes.push(fakeProvider);
    const { goDriverKubeconfig } = await import('../test/support/go-driver-identity.js');
    go = { binary, kubeconfig: await goDriverKubeconfig(kube.cluster, binary) };
  }
  return { work, providerRoot, sources, kube, fileProvider, fakeProvider, go, processes };
}

let instances = 0;

/** BENCH_CPU_PROF=<dir>: our driver and `file` provider write V8 CPU profiles there when they stop. */
const cpuProfDir = (): string | undefined => process.env['BENCH_CPU_PROF'] || undefined;

/** Starts a fresh driver of `side` on its own socket, node name and kubelet dir; Probe must answer. */
export async function startSide(env: VsGoEnv, side: Side, mountMode: 'tmpfs' | 'dir'): Promise<DriverUnderTest> {
  const n = ++instances;
  const socketPath = join(env.work, `csi-${side}-${n}.sock`);
  const kubeletDir = join(env.work, `kubelet-${side}-${n}`);
  let proc: BenchProcess;
  let nodeName: string;
  if (side === 'ours') {
    nodeName = 'bench-node'; // startDriver's --nodeid
    proc = await startDriver(env.work, socketPath, '', mountMode, cpuProfDir(), [
      `--kubeconfig=${env.kube.kubeconfig}`,
    ]);
  } else {
    if (!env.go) throw new Error('the Go driver is not installed');
    // A node name per instance: the Go driver's caches are filtered by node, so each starts empty.
    nodeName = `go-node-${n}`;
    proc = await BenchProcess.startBinary(
      'Go driver',
      env.go.binary,
      goDriverArgs({
        socketPath,
        nodeName,
        kubeconfig: env.go.kubeconfig,
        providersDir: join(env.work, 'providers'),
        rotation: true,
        verbosity: 0,
      }),
      GO_DRIVER_READY,
    );
  }
  env.processes.push(proc);
  const client = new CsiClient(socketPath);
  if (!(await client.probe())) throw new Error(`${side} driver Probe: not ready`);
  return {
    side,
    process: proc,
    client,
    nodeName,
    kubeletDir,
    async stop() {
      client.close();
      await proc.stop();
    },
  };
}
