import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readlink, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from '../bin/csi-client.js';
import type { NodePublishVolumeRequest } from '../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { SPC_NAMESPACE, writeObjects, writeSecretProviderClass } from './fixtures.js';
import { mib, mountsUnder, processCpuMs, processMemory, type ProcessMemory } from './proc.js';
import {
  benchNodeFlags,
  chooseMountMode,
  startDriver,
  withDriverSession,
  usesImageNodeFlags,
  startFileProvider,
  type BenchProcess,
  type MountMode,
} from './processes.js';
import {
  checkTarget,
  formatReport,
  positiveIntEnv,
  runBench,
  startBenchRun,
  writeResults,
  type BenchResults,
  type LatencyRow,
  type MemoryRow,
  type Target,
} from './report.js';
import { rounded, summarize } from './stats.js';
import { Interrupt, progressLine, removeWorkDir } from './run-control.js';

/**
 * `npm run bench`: NodePublishVolume latency and driver memory, measured on the real
 * driver and file provider processes over Unix sockets in a temp dir (see bench/README.md).
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/run.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

const OBJECT_SIZE = 1024;
const SIZES = [1, 10, 100] as const;
type Size = (typeof SIZES)[number];
const DEFAULT_ITERATIONS: Readonly<Record<Size, number>> = { 1: 200, 10: 200, 100: 50 };
const TARGET_P50_MS_10_OBJECTS = 5;
const TARGET_IDLE_RSS_MIB = 60;

/** BENCH_ITERATIONS: one count for every case ("20") or one per size 1,10,100 ("200,200,50"). */
function iterationCounts(): Record<Size, number> {
  const raw = process.env['BENCH_ITERATIONS'];
  if (raw === undefined || raw.trim() === '') return { ...DEFAULT_ITERATIONS };
  const parts = raw.split(',').map((p) => Number(p.trim()));
  if (parts.some((n) => !Number.isSafeInteger(n) || n <= 0) || (parts.length !== 1 && parts.length !== SIZES.length)) {
    throw new Error(
      `BENCH_ITERATIONS must be a positive integer or three of them for 1,10,100 objects ("200,200,50"), got "${raw}"`,
    );
  }
  return { 1: parts[0]!, 10: parts[parts.length === 1 ? 0 : 1]!, 100: parts[parts.length === 1 ? 0 : 2]! };
}

const interrupt = new Interrupt();
const checkInterrupted = (): void => interrupt.check();
const progress = progressLine('');

const memoryMiB = (m: ProcessMemory) => ({ rssMiB: mib(m.rssKiB), peakMiB: mib(m.hwmKiB) });

/** One volume as kubelet would publish it: a new pod, a new target path. */
interface Volume {
  readonly volumeId: string;
  readonly target: string;
  readonly request: NodePublishVolumeRequest;
}

/** Plays kubelet against one driver and remembers what is published, so cleanup can undo it. */
class FakeKubelet {
  private readonly published = new Map<string, string>();
  private seq = 0;

  constructor(
    readonly client: CsiClient,
    private readonly kubeletDir: string,
  ) {}

  newVolume(spcName: string): Volume {
    const uid = randomUUID();
    const volumeId = `csi-${randomUUID().replace(/-/g, '')}`;
    const target = join(this.kubeletDir, 'pods', uid, 'volumes', 'kubernetes.io~csi', 'secrets-store', 'mount');
    const ctx = inlineVolumeContext(
      { name: `bench-pod-${++this.seq}`, namespace: SPC_NAMESPACE, uid, serviceAccountName: 'default' },
      spcName,
    );
    return { volumeId, target, request: inlinePublishRequest(volumeId, target, ctx) };
  }

  /** NodePublishVolume; returns the client-side latency in ms. */
  async publish(v: Volume): Promise<number> {
    checkInterrupted();
    this.published.set(v.target, v.volumeId);
    const t0 = performance.now();
    await this.client.publish(v.request);
    return performance.now() - t0;
  }

  /** NodeUnpublishVolume; returns the client-side latency in ms. */
  async unpublish(v: Volume): Promise<number> {
    const t0 = performance.now();
    await this.client.unpublish(v.volumeId, v.target);
    const ms = performance.now() - t0;
    this.published.delete(v.target);
    return ms;
  }

  /** Unpublishes everything still published; keeps going on errors and reports the first. */
  async unpublishAll(): Promise<void> {
    let first: unknown;
    for (const [target, volumeId] of [...this.published]) {
      try {
        await this.client.unpublish(volumeId, target);
        this.published.delete(target);
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}

interface Bench {
  readonly work: string;
  readonly mountMode: MountMode;
  readonly cpuProfDir: string | undefined;
  readonly processes: BenchProcess[];
  readonly checks: Record<string, boolean>;
  /** The file provider's pid, once started (for its CPU time). */
  providerPid?: number;
}

/** CPU time (ms, user + system) the driver and the provider used while `fn` ran, per `calls`. */
async function cpuPerCall(
  bench: Bench,
  driver: BenchProcess,
  calls: number,
  fn: () => Promise<void>,
): Promise<{ driver: number; provider: number }> {
  const pids = [driver.pid, bench.providerPid ?? driver.pid];
  const before = await Promise.all(pids.map(processCpuMs));
  await fn();
  const after = await Promise.all(pids.map(processCpuMs));
  const per = (i: number) => Math.round(((after[i]! - before[i]!) / calls) * 100) / 100;
  return { driver: per(0), provider: bench.providerPid === undefined ? 0 : per(1) };
}

/** Starts a fresh driver on its own socket and spc dir, runs `fn`, then unpublishes all and stops it. */
async function withDriver<T>(
  bench: Bench,
  label: string,
  spcDir: string,
  fn: (kubelet: FakeKubelet, driver: BenchProcess) => Promise<T>,
): Promise<T> {
  checkInterrupted();
  const socket = join(bench.work, `csi-${label}.sock`);
  const driver = await startDriver(bench.work, socket, spcDir, bench.mountMode, bench.cpuProfDir);
  bench.processes.push(driver);
  const client = new CsiClient(socket);
  const kubelet = new FakeKubelet(client, join(bench.work, `kubelet-${label}`));
  return withDriverSession(
    driver,
    client,
    () => kubelet.unpublishAll(),
    progress,
    async () => {
      if (!(await client.probe())) throw new Error('driver Probe: not ready');
      return fn(kubelet, driver);
    },
  );
}

/** The pod sees every object with the provider's contents; on tmpfs the target is a mount point. */
async function verifyVolume(bench: Bench, v: Volume, providerRoot: string, sources: readonly string[]): Promise<void> {
  for (const [i, source] of sources.entries()) {
    const name = `secret-${String(i).padStart(3, '0')}`;
    const [got, want] = await Promise.all([readFile(join(v.target, name)), readFile(join(providerRoot, source))]);
    if (!got.equals(want)) throw new Error(`published ${name} at ${v.target} differs from ${source}`);
  }
  bench.checks['contents-match-provider'] = true;
  if (bench.mountMode === 'tmpfs') {
    const mounted = (await mountsUnder(v.target)).includes(v.target);
    if (!mounted) throw new Error(`mount mode tmpfs but ${v.target} is not a mount point`);
    bench.checks['target-is-tmpfs-mount'] = true;
  }
}

async function isGone(path: string): Promise<boolean> {
  return stat(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );
}

async function measureMemory(bench: Bench, spcDir: string, spcName: string, volumes: number): Promise<MemoryRow[]> {
  return withDriver(bench, 'rss', spcDir, async (kubelet, driver) => {
    // withDriver awaited a Probe round trip: the driver has started and served a call.
    const idle = await processMemory(driver.pid);
    progress(`idle driver RSS ${mib(idle.rssKiB)} MiB; publishing ${volumes} volumes of 10 objects and keeping them`);
    const kept: Volume[] = [];
    for (let i = 0; i < volumes; i++) {
      const v = kubelet.newVolume(spcName);
      await kubelet.publish(v);
      kept.push(v);
    }
    await kubelet.client.probe();
    const loaded = await processMemory(driver.pid);
    for (const v of kept) await kubelet.unpublish(v);
    await kubelet.client.probe();
    const after = await processMemory(driver.pid);
    return [
      { id: 'rss-idle', label: 'idle (started, one Probe)', ...memoryMiB(idle), targetId: 'idle-rss' },
      { id: 'rss-mounted', label: `${volumes} volumes × 10 objects mounted`, ...memoryMiB(loaded) },
      { id: 'rss-after-unpublish', label: `after unpublishing all ${volumes}`, ...memoryMiB(after) },
    ];
  });
}

async function measurePublish(
  bench: Bench,
  size: Size,
  iterations: number,
  warmup: number,
  spcDir: string,
  spcName: string,
  providerRoot: string,
  sources: readonly string[],
): Promise<LatencyRow[]> {
  return withDriver(bench, `publish-${size}`, spcDir, async (kubelet, driver) => {
    const noun = size === 1 ? 'object' : 'objects';
    for (let i = 0; i < warmup; i++) {
      const v = kubelet.newVolume(spcName);
      await kubelet.publish(v);
      if (i === 0) await verifyVolume(bench, v, providerRoot, sources);
      await kubelet.unpublish(v);
      if (i === 0) {
        if (!(await isGone(v.target))) throw new Error(`NodeUnpublishVolume left ${v.target} behind`);
        bench.checks['unpublish-removes-target'] = true;
      }
    }
    progress(`publish ${size} ${noun}: ${iterations} iterations`);
    const publishMs: number[] = [];
    const unpublishMs: number[] = [];
    const publishCpu = await cpuPerCall(bench, driver, iterations, async () => {
      for (let i = 0; i < iterations; i++) {
        const v = kubelet.newVolume(spcName);
        publishMs.push(await kubelet.publish(v));
        unpublishMs.push(await kubelet.unpublish(v));
      }
    });
    const rows: LatencyRow[] = [
      {
        id: `publish-${size}`,
        label: `publish ${size} ${noun} (new target)`,
        objects: size,
        latencyMs: rounded(summarize(publishMs)),
        cpuMsPerCall: publishCpu,
        ...(size === 10 ? { targetId: 'publish-10-p50' } : {}),
      },
    ];

    if (size === 10) {
      progress(`republish ${size} ${noun} unchanged: ${iterations} iterations`);
      const v = kubelet.newVolume(spcName);
      await kubelet.publish(v);
      const dataBefore = await readlink(join(v.target, '..data'));
      for (let i = 0; i < warmup; i++) await kubelet.publish(v);
      const republishMs: number[] = [];
      const republishCpu = await cpuPerCall(bench, driver, iterations, async () => {
        for (let i = 0; i < iterations; i++) republishMs.push(await kubelet.publish(v));
      });
      const unchanged = (await readlink(join(v.target, '..data'))) === dataBefore;
      bench.checks['republish-unchanged-is-noop'] = unchanged;
      if (!unchanged) progress('WARNING: republishing an unchanged volume rewrote it (..data moved)');
      await kubelet.unpublish(v);
      rows.push({
        id: `republish-${size}`,
        label: `republish ${size} ${noun} (unchanged)`,
        objects: size,
        latencyMs: rounded(summarize(republishMs)),
        cpuMsPerCall: republishCpu,
      });
    }
    const mem = memoryMiB(await processMemory(driver.pid));
    rows.push({
      id: `unpublish-${size}`,
      label: `unpublish ${size} ${noun}`,
      objects: size,
      latencyMs: rounded(summarize(unpublishMs)),
    });
    return rows.map((r) => ({ ...r, driverMemoryAfter: mem }));
  });
}

async function main(): Promise<void> {
  const run = await startBenchRun('publish', REPO_DIR);
  const iterations = iterationCounts();
  const warmup = positiveIntEnv('BENCH_WARMUP', 5);
  const rssVolumes = positiveIntEnv('BENCH_RSS_VOLUMES', 100);
  const cpuProfDir = process.env['BENCH_CPU_PROF'] || undefined;
  const { mode: mountMode, reason: mountModeReason } = chooseMountMode();

  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-'));
  const bench: Bench = { work, mountMode, cpuProfDir, processes: [], checks: {} };
  interrupt.listen();
  let latency: LatencyRow[] = [];
  let memory: MemoryRow[];
  try {
    progress(`working in ${work}, mount mode ${mountMode} (${mountModeReason})`);
    if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
    const providerRoot = join(work, 'provider-root');
    const cases = new Map<Size, { spcDir: string; spcName: string; sources: string[] }>();
    for (const size of SIZES) {
      const sources = await writeObjects(providerRoot, size, OBJECT_SIZE);
      const spcDir = join(work, `spc-${size}`);
      cases.set(size, { spcDir, spcName: await writeSecretProviderClass(spcDir, size, sources), sources });
    }
    await mkdir(join(work, 'providers'), { recursive: true });
    const provider = await startFileProvider(work, providerRoot, cpuProfDir);
    bench.processes.push(provider);
    bench.providerPid = provider.pid;

    const ten = cases.get(10)!;
    memory = await measureMemory(bench, ten.spcDir, ten.spcName, rssVolumes);
    for (const size of SIZES) {
      const c = cases.get(size)!;
      latency.push(
        ...(await measurePublish(bench, size, iterations[size], warmup, c.spcDir, c.spcName, providerRoot, c.sources)),
      );
    }
    if (!provider.running) throw new Error(`the file provider exited:\n${provider.stderrTail()}`);
    // Publishes first, then unpublishes, for the table.
    latency = [
      ...latency.filter((r) => !r.id.startsWith('unpublish')),
      ...latency.filter((r) => r.id.startsWith('unpublish')),
    ];
  } finally {
    for (const p of bench.processes.reverse()) await p.stop().catch(() => undefined);
    await removeWorkDir(work, progress);
    interrupt.release();
  }

  const p50Ten = latency.find((r) => r.id === 'publish-10')!.latencyMs.p50;
  const idle = memory.find((r) => r.id === 'rss-idle')!.rssMiB;
  const targets: Target[] = [
    checkTarget(
      'publish-10-p50',
      `publish p50 ≤ ${TARGET_P50_MS_10_OBJECTS} ms (10 objects, tmpfs)`,
      p50Ten,
      TARGET_P50_MS_10_OBJECTS,
      'ms',
      mountMode === 'tmpfs',
      'target is for tmpfs',
    ),
    checkTarget('idle-rss', `idle RSS ≤ ${TARGET_IDLE_RSS_MIB} MiB`, idle, TARGET_IDLE_RSS_MIB, 'MiB', true),
  ];
  const results: BenchResults = {
    ...run.finish(),
    mountMode,
    mountModeReason,
    config: {
      objectSizeBytes: OBJECT_SIZE,
      iterations,
      warmup,
      rssVolumes,
      rssObjectsPerVolume: 10,
      nodeFlags: benchNodeFlags(),
      provider: 'file',
      driverLogLevel: 'info',
      metrics: 'on (127.0.0.1:0)',
      concurrency: 1,
      latency: 'client-side NodePublishVolume round trip (performance.now), unpublish timed separately',
      percentiles: 'nearest rank',
      cpuProfileDir: cpuProfDir ?? null,
    },
    latency,
    memory,
    targets,
    checks: bench.checks,
  };
  // JSON first: a closed stdout (`npm run bench | head`) must not lose the results.
  const files = await writeResults(RESULTS_DIR, results, { latest: cpuProfDir === undefined && usesImageNodeFlags() });
  process.stdout.write(`${formatReport(results)}\n`);
  progress(`wrote ${files.join(' and ')}`);
}

runBench('publish', main);
