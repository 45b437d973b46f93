import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { idleCpuMsPerSecond, mib, type MemoryBreakdown } from './proc.js';
import { benchNodeFlags, chooseMountMode, usesImageNodeFlags, type BenchProcess } from './processes.js';
import { nonNegativeIntEnv, positiveIntEnv, runBench, startBenchRun, writeBenchResults } from './report.js';
import { summarize } from './stats.js';
import {
  burst,
  cleanupRetryCount,
  driverRss,
  firstPublish,
  providerCpu,
  republish,
  type SideSamples,
} from './vs-go-cases.js';
import {
  clusterUnavailable,
  FAKE_SPC,
  goHalfUnavailable,
  SIZES,
  spcFor,
  startSide,
  startVsGoEnv,
  type DriverUnderTest,
  type Side,
  type Size,
} from './vs-go-env.js';
import {
  beforeAfter,
  checkTargets,
  compare,
  formatVsReport,
  LIBRARY_BUDGET,
  type Baseline,
  type ComparisonRow,
  type VsGoResults,
} from './vs-go-report.js';
import { progressLine, removeWorkDir } from './run-control.js';

/**
 * `npm run bench:vs-go`: our driver against upstream's Go driver v1.6.1 on the same
 * kube-apiserver, `file` provider and kubelet-like client, in interleaved batches
 * (bench/README.md, "Versus upstream's Go driver").
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

/**
 * The full run of the hand-written gRPC, protobuf, logging and metrics foundation, made
 * on the machine bench/README.md names just before the move onto the libraries: the
 * "before" of the before → after table.
 */
const BASELINE_FILE = join(RESULTS_DIR, 'vs-go-driver-baseline.json');

async function readBaseline(): Promise<Baseline | undefined> {
  try {
    const doc = JSON.parse(await readFile(BASELINE_FILE, 'utf8')) as VsGoResults;
    return { commit: (doc.machine.gitCommit ?? 'unknown').slice(0, 7), startedAt: doc.startedAt, rows: doc.rows };
  } catch {
    return undefined;
  }
}

const progress = progressLine('vs-go');

/** BENCH_VS_ITERATIONS: one count for every size ("5") or one per size 1,10,100 ("100,100,30"). */
function iterationCounts(): Record<Size, number> {
  const raw = process.env['BENCH_VS_ITERATIONS'];
  if (raw === undefined || raw.trim() === '') return { 1: 100, 10: 100, 100: 30 };
  const parts = raw.split(',').map((p) => Number(p.trim()));
  if (parts.some((n) => !Number.isSafeInteger(n) || n <= 0) || (parts.length !== 1 && parts.length !== SIZES.length)) {
    throw new Error(
      `BENCH_VS_ITERATIONS must be a positive integer or three of them for 1,10,100 objects ("100,100,30"), got "${raw}"`,
    );
  }
  return { 1: parts[0]!, 10: parts[parts.length === 1 ? 0 : 1]!, 100: parts[parts.length === 1 ? 0 : 2]! };
}

/** The cases of a run; BENCH_VS_CASES picks some of them (a comma list), for a quick look at one row. */
const CASES = ['rss', 'publish', 'republish', 'burst', 'provider-cpu'] as const;
type Case = (typeof CASES)[number];

function chosenCases(): Set<Case> {
  const raw = process.env['BENCH_VS_CASES'];
  if (raw === undefined || raw.trim() === '') return new Set(CASES);
  const picked = raw
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const unknown = picked.filter((c) => !(CASES as readonly string[]).includes(c));
  if (unknown.length > 0)
    throw new Error(`BENCH_VS_CASES: unknown case(s) ${unknown.join(', ')}; the cases are ${CASES.join(', ')}`);
  return new Set(picked as Case[]);
}

const p = (m: Map<Side, SideSamples>, side: Side, pick: (s: SideSamples) => number): number | null =>
  m.has(side) ? pick(m.get(side)!) : null;
const p50 = (xs: number[]) => summarize(xs).p50;
const p99 = (xs: number[]) => summarize(xs).p99;

async function main(): Promise<void> {
  const run = await startBenchRun('vs-go-driver', REPO_DIR);
  const noCluster = clusterUnavailable();
  if (noCluster) {
    process.stdout.write(`bench vs-go: not run: ${noCluster}\n`);
    return;
  }
  const goMissing = goHalfUnavailable();
  if (goMissing)
    process.stdout.write(`bench vs-go: upstream's Go driver is absent (${goMissing}); running our half only\n`);
  const iterations = iterationCounts();
  const cases = chosenCases();
  const batch = positiveIntEnv('BENCH_VS_BATCH', 10);
  const warmup = positiveIntEnv('BENCH_VS_WARMUP', 3);
  const paceMs = nonNegativeIntEnv('BENCH_VS_PACE_MS', 150);
  const burstPods = positiveIntEnv('BENCH_VS_BURST_PODS', 100);
  const burstRounds = positiveIntEnv('BENCH_VS_BURST_ROUNDS', 3);
  const rssCounts = [positiveIntEnv('BENCH_VS_RSS_VOLUMES_SMALL', 100), positiveIntEnv('BENCH_VS_RSS_VOLUMES', 500)];
  const idleWindowMs = positiveIntEnv('BENCH_VS_IDLE_MS', 5000);
  const { mode: mountMode } = chooseMountMode();
  const sides: Side[] = goMissing ? ['ours'] : ['ours', 'theirs'];

  const work = await mkdtemp(join(tmpdir(), 'ssc-vs-go-'));
  const processes: BenchProcess[] = [];
  const rows: ComparisonRow[] = [];
  let stopCluster: (() => Promise<void>) | undefined;
  try {
    progress(`working in ${work}; starting kube-apiserver and providers`);
    const env = await startVsGoEnv(work, !goMissing, processes);
    stopCluster = () => env.kube.stop();

    // Memory first, each driver fresh and alone: idle, then 100 and 500 volumes of 10 objects.
    const rss = new Map<Side, Awaited<ReturnType<typeof driverRss>>>();
    for (const side of cases.has('rss') ? sides : []) {
      progress(`RSS: ${side} driver idle, then ${rssCounts.join(' and ')} volumes`);
      const d = await startSide(env, side, mountMode);
      try {
        rss.set(side, await driverRss(env, d, spcFor(10), rssCounts, idleWindowMs));
      } finally {
        await d.stop();
      }
    }
    // The providers, idle meanwhile (no driver calls them): ours and upstream's Go fake.
    const providerPids = [env.fileProvider.pid, ...(env.fakeProvider ? [env.fakeProvider.pid] : [])];
    const providerIdle = cases.has('rss') ? await idleCpuMsPerSecond(providerPids, idleWindowMs) : [];
    const rssOf = (side: Side, pick: (r: Awaited<ReturnType<typeof driverRss>>) => number | undefined) =>
      rss.has(side) ? (pick(rss.get(side)!) ?? null) : null;

    const drivers: DriverUnderTest[] = [];
    for (const side of sides) drivers.push(await startSide(env, side, mountMode));
    try {
      for (const size of cases.has('publish') ? SIZES : []) {
        progress(`first publish of ${size} object(s): ${iterations[size]} per driver`);
        const m = await firstPublish(env, drivers, spcFor(size), size, iterations[size], batch, warmup, paceMs);
        rows.push(
          compare(
            `publish-${size}-p50`,
            `first publish ${size} obj p50`,
            'ms',
            p(m, 'ours', (s) => p50(s.publishMs))!,
            p(m, 'theirs', (s) => p50(s.publishMs)),
          ),
        );
        rows.push(
          compare(
            `publish-${size}-p99`,
            `first publish ${size} obj p99`,
            'ms',
            p(m, 'ours', (s) => p99(s.publishMs))!,
            p(m, 'theirs', (s) => p99(s.publishMs)),
          ),
        );
        rows.push(
          compare(
            `unpublish-${size}-p50`,
            `unpublish ${size} obj p50`,
            'ms',
            p(m, 'ours', (s) => p50(s.unpublishMs))!,
            p(m, 'theirs', (s) => p50(s.unpublishMs)),
          ),
        );
        rows.push(
          compare(
            `driver-cpu-${size}`,
            `driver CPU / publish+unpublish, ${size} obj`,
            'ms',
            p(m, 'ours', (s) => s.cpuMs / s.calls)!,
            p(m, 'theirs', (s) => s.cpuMs / s.calls),
          ),
        );
      }
      if (cases.has('republish')) {
        progress(`unchanged republish of 10 objects: ${iterations[10]} per driver`);
        const re = await republish(env, drivers, spcFor(10), iterations[10], batch, paceMs);
        rows.push(
          compare(
            'republish-10-p50',
            'unchanged republish 10 obj p50',
            'ms',
            p(re, 'ours', (s) => p50(s.publishMs))!,
            p(re, 'theirs', (s) => p50(s.publishMs)),
          ),
        );
        rows.push(
          compare(
            'republish-10-p99',
            'unchanged republish 10 obj p99',
            'ms',
            p(re, 'ours', (s) => p99(s.publishMs))!,
            p(re, 'theirs', (s) => p99(s.publishMs)),
          ),
        );
      }
      if (cases.has('burst')) {
        progress(`burst: ${burstPods} pods at once, ${burstRounds} round(s) per driver`);
        const b = await burst(env, drivers, spcFor(10), burstPods, burstRounds);
        const median = (xs: number[] | undefined) => (xs === undefined ? null : summarize(xs).p50);
        rows.push(
          compare(
            'burst-100',
            `burst of ${burstPods} pods, total (median of ${burstRounds})`,
            'ms',
            median(b.get('ours'))!,
            median(b.get('theirs')),
          ),
        );
      }
      if (cases.has('provider-cpu')) {
        progress(`provider CPU per 10-object Mount: ${iterations[10]} per provider`);
        const pc = await providerCpu(env, drivers[0]!, { file: spcFor(10), fake: FAKE_SPC }, iterations[10], batch);
        rows.push(compare('provider-cpu-10', 'provider CPU / 10-obj Mount (file vs Go fake)', 'ms', pc.file, pc.fake));
      }
      for (const d of drivers)
        if (!d.process.running) throw new Error(`the ${d.side} driver exited:\n${d.process.stderrTail()}`);
    } finally {
      for (const d of drivers) await d.stop();
    }
    if (cases.has('rss')) {
      rows.push(
        compare(
          'rss-idle',
          'driver RSS idle',
          'MiB',
          rssOf('ours', (r) => r.idle)!,
          rssOf('theirs', (r) => r.idle),
        ),
      );
      // Where the idle RSS is (bench/README.md, "What the libraries cost"): anonymous memory, and file-backed pages,
      // most of them the program binary's own.
      const part = (pick: (b: MemoryBreakdown) => number) => (r: Awaited<ReturnType<typeof driverRss>>) =>
        mib(pick(r.idleBreakdown));
      rows.push(
        compare(
          'rss-idle-anon',
          '  of it anonymous (heap, malloc, stacks)',
          'MiB',
          rssOf(
            'ours',
            part((b) => b.anonKiB),
          )!,
          rssOf(
            'theirs',
            part((b) => b.anonKiB),
          ),
        ),
      );
      rows.push(
        compare(
          'rss-idle-file',
          '  of it file-backed',
          'MiB',
          rssOf(
            'ours',
            part((b) => b.fileKiB),
          )!,
          rssOf(
            'theirs',
            part((b) => b.fileKiB),
          ),
        ),
      );
      rows.push(
        compare(
          'rss-idle-binary',
          '    of that the node / Go binary',
          'MiB',
          rssOf(
            'ours',
            part((b) => b.binaryKiB),
          )!,
          rssOf(
            'theirs',
            part((b) => b.binaryKiB),
          ),
        ),
      );
      for (const n of rssCounts)
        rows.push(
          compare(
            `rss-${n}`,
            `driver RSS, ${n} volumes mounted`,
            'MiB',
            rssOf('ours', (r) => r.mounted.get(n))!,
            rssOf('theirs', (r) => r.mounted.get(n)),
          ),
        );
      rows.push(
        compare(
          'idle-cpu-driver',
          'driver CPU idle',
          'ms/s',
          rssOf('ours', (r) => r.idleCpuMsPerS)!,
          rssOf('theirs', (r) => r.idleCpuMsPerS),
        ),
      );
      rows.push(
        compare(
          'idle-cpu-provider',
          'provider CPU idle (file vs Go fake)',
          'ms/s',
          providerIdle[0]!,
          providerIdle[1] ?? null,
        ),
      );
    }
  } finally {
    for (const proc of processes.reverse()) await proc.stop().catch(() => undefined);
    await stopCluster?.().catch(() => undefined);
    await removeWorkDir(work, progress);
  }

  const baseline = await readBaseline();
  const results: VsGoResults = {
    ...run.finish(),
    goDriver: goMissing ? { ran: false, reason: goMissing } : { ran: true },
    mountMode,
    config: {
      iterations,
      batch,
      warmup,
      paceMs,
      burstPods,
      burstRounds,
      rssVolumes: rssCounts,
      idleWindowMs,
      objectSizeBytes: 1024,
      nodeFlags: benchNodeFlags(),
      ourDriver: 'Kubernetes mode (--kubeconfig, deploy/ RBAC), info logging, metrics on, no rotation',
      goDriver:
        'v1.6.1, upstream RBAC, -v=0, metrics on, --enable-secret-rotation --rotation-poll-interval=1ms (so a republish re-mounts)',
      order: 'batches alternate ours/theirs in ABBA order',
      percentiles: 'nearest rank',
      cpu: 'the sum of /proc/<pid>/task/*/schedstat run times (ns) + /proc/<pid>/stat cutime+cstime (children that exited, 10 ms ticks)',
      cases: [...cases],
    },
    rows,
    cleanupUnpublishRetries: cleanupRetryCount(),
    targets: checkTargets(rows),
    budget: checkTargets(rows, LIBRARY_BUDGET),
    ...(baseline
      ? {
          beforeAfter: {
            baseline: { commit: baseline.commit, startedAt: baseline.startedAt },
            rows: beforeAfter(baseline, rows),
          },
        }
      : {}),
  };
  const files = await writeBenchResults(
    RESULTS_DIR,
    'vs-go-driver',
    results,
    usesImageNodeFlags() && !goMissing && cases.size === CASES.length && !process.env['BENCH_CPU_PROF'],
  );
  process.stdout.write(`${formatVsReport(results)}\n`);
  progress(`wrote ${files.join(', ')}`);
}

runBench('vs-go', main);
