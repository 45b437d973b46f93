import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient } from '../bin/csi-client.js';
import { objectNames, objectsParameter, SPC_NAMESPACE, writeObjects, writeSecretProviderClass } from './fixtures.js';
import { mib, processCpuMs, processMemory } from './proc.js';
import {
  benchNodeFlags,
  chooseMountMode,
  startDriver,
  usesImageNodeFlags,
  withDriverSession,
  startFileProvider,
  type BenchProcess,
  type MountMode,
} from './processes.js';
import {
  machineLine,
  nodeFlagsText,
  runBench,
  startBenchRun,
  table,
  writeBenchResults,
  type BenchRunHeader,
  type Target,
  type TargetStatus,
} from './report.js';
import { kubernetesUnavailable, startBenchCluster, type BenchCluster } from './kube-env.js';
import { delta } from './stats.js';
import {
  asRound,
  countMoved,
  dataLinks,
  DriverPause,
  holdUntil,
  loggedPort,
  metricSum,
  nextRound,
  parseLogLine,
  scrape,
  Volumes,
  VOLUME_NAME,
  type BenchPod,
  type RoundReport,
  type Volume,
} from './rounds.js';
import { Interrupt, progressLine, removeWorkDir } from './run-control.js';

/**
 * `npm run bench` (after the publish benchmark) or `npm run bench:rotation`: the cost of
 * one rotation round over N mounted volumes, unchanged and changed, measured on the real
 * driver (local mode, --enable-secret-rotation) and file provider (see bench/README.md).
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/rotation.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

const OBJECTS_PER_VOLUME = 5;
const OBJECT_SIZE = 1024;
const DEFAULT_VOLUMES = [100, 500];
const POLL_INTERVAL = '2s';
const POLL_INTERVAL_MS = 2000;
/** The schedule puts a volume at lastAttempt + interval + up to 10 % of it (driver/rotation/schedule.ts). */
const JITTER_FRACTION = 0.1;
/** Extra time the paused driver is held past the last volume's latest due time. */
const HOLD_MARGIN_MS = 300;
/** Concurrent NodePublish/NodeUnpublish calls while setting up and tearing down (not measured). */
const SETUP_CONCURRENCY = 8;
const ROUND_TIMEOUT_MS = 180_000;
const TARGET_UNCHANGED_500_MS = 2000;
const TARGET_RSS_500_MIB = 100;
const NOT_LOCAL = 'n/a (local mode)';
const ROTATION_FLAGS = ['--enable-secret-rotation', `--rotation-poll-interval=${POLL_INTERVAL}`];

/** BENCH_ROTATION_VOLUMES: volume counts, comma-separated ("100,500"). */
function volumeCounts(): number[] {
  const raw = process.env['BENCH_ROTATION_VOLUMES'];
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_VOLUMES];
  const counts = raw.split(',').map((p) => Number(p.trim()));
  if (counts.some((n) => !Number.isSafeInteger(n) || n <= 0))
    throw new Error(`BENCH_ROTATION_VOLUMES must be positive integers separated by commas ("100,500"), got "${raw}"`);
  return counts;
}

type Mode = 'local' | 'kubernetes';

/** BENCH_ROTATION_MODES: "local", "kubernetes" or both (default: both; Kubernetes mode only where it can run). */
function modes(): Mode[] {
  const raw = process.env['BENCH_ROTATION_MODES'];
  if (raw === undefined || raw.trim() === '') return ['local', 'kubernetes'];
  const list = raw.split(',').map((m) => m.trim());
  if (list.some((m) => m !== 'local' && m !== 'kubernetes'))
    throw new Error(`BENCH_ROTATION_MODES must be local, kubernetes or both ("local,kubernetes"), got "${raw}"`);
  return list as Mode[];
}

const interrupt = new Interrupt();
const checkInterrupted = (): void => interrupt.check();

const progress = progressLine('rotation');

/** The driver's rotation counters (rotation_reconcile_*), for cross-checking the log line. */
interface ReconcileCounters {
  readonly rotatedFalse: number;
  readonly rotatedTrue: number;
  readonly errors: number;
}

/** The driver's /metrics: rotation counters, and its V8 heap (is the RSS live data or garbage not yet returned?). */
function driverMetrics(text: string): {
  counters: ReconcileCounters;
  heapUsedMiB: number;
  heapTotalMiB: number;
  apiRequests: number;
} {
  const toMiB = (bytes: number) => Math.round((bytes / (1024 * 1024)) * 10) / 10;
  return {
    counters: {
      rotatedFalse: metricSum(text, 'rotation_reconcile_total', { rotated: 'false' }),
      rotatedTrue: metricSum(text, 'rotation_reconcile_total', { rotated: 'true' }),
      errors: metricSum(text, 'rotation_reconcile_error_total'),
    },
    heapUsedMiB: toMiB(metricSum(text, 'nodejs_heap_size_used_bytes')),
    heapTotalMiB: toMiB(metricSum(text, 'nodejs_heap_size_total_bytes')),
    apiRequests: metricSum(text, 'rest_client_requests_total'),
  };
}

/** Made-up pods for local mode (no API object behind them). */
function localPods(count: number): BenchPod[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `bench-rotation-pod-${i}`,
    namespace: SPC_NAMESPACE,
    uid: randomUUID(),
  }));
}

type RoundKind = 'unchanged' | 'changed';

interface RotationRow {
  readonly id: string;
  readonly volumes: number;
  readonly kind: RoundKind;
  /** The reconciler's own log line for the measured round. */
  readonly round: RoundReport;
  /** Delta of provider_mount_total (all results) on the provider's /metrics across the round. */
  readonly providerMountCalls: number;
  /** Volumes whose `..data` link moved during the round. */
  readonly fileWrites: number;
  /** Distinct targets in `volume rotated` log lines during the round. */
  readonly volumesRotatedLogged: number;
  /** Deltas of the driver's rotation_reconcile_total{rotated} and rotation_reconcile_error_total. */
  readonly reconcileMetrics: ReconcileCounters;
  /** CPU time (user + system, all threads) the driver and the provider used from resume to the round's log line. */
  readonly driverCpuMs: number;
  readonly providerCpuMs: number;
  readonly driverRssMiB: number;
  readonly driverPeakMiB: number;
  /** The driver's V8 heap after the round (nodejs_heap_size_used_bytes / _total_bytes). */
  readonly driverHeapUsedMiB: number;
  readonly driverHeapTotalMiB: number;
  /** Where the driver read its classes from (local: --spc-dir; kubernetes: a real kube-apiserver). */
  readonly mode: Mode;
  /** Kubernetes mode: write requests kube-apiserver served during the round (leases left out), and by resource; null in local mode. */
  readonly apiWrites: number | null;
  readonly apiWritesByResource: Record<string, number> | null;
  /** Kubernetes mode: every API request the driver made during the round, reads included (its rest_client_requests_total); null in local mode. */
  readonly apiRequests: number | null;
  /** Kubernetes mode: Events created in the pods' namespace during the round; null in local mode. */
  readonly events: number | null;
  /** How long the paused driver was held before the round (ms), so that every volume was due. */
  readonly heldMs: number;
}

/** A round the reconciler ran on its own timer (not measured), for seeing how the jitter spreads volumes. */
interface ObservedRound extends RoundReport {
  readonly atSeconds: number;
  readonly phase: string;
}

interface CaseResult {
  readonly rows: RotationRow[];
  readonly observedRounds: ObservedRound[];
  readonly publishSeconds: number;
}

interface Ctx {
  readonly work: string;
  readonly mountMode: MountMode;
  readonly providerRoot: string;
  readonly sources: readonly string[];
  readonly spcDir: string;
  readonly spcName: string;
  readonly providerMetricsPort: number;
  readonly providerPid: number;
  /** The objects parameter of the class (Kubernetes mode creates the class from it). */
  readonly objectsYaml: string;
  readonly cpuProfDir: string | undefined;
  readonly processes: BenchProcess[];
  readonly checks: Record<string, boolean>;
}

function check(ctx: Ctx, name: string, ok: boolean, detail: string): void {
  ctx.checks[name] = (ctx.checks[name] ?? true) && ok;
  if (!ok) progress(`CHECK FAILED ${name}: ${detail}`);
}

async function rewriteSources(ctx: Ctx): Promise<void> {
  for (const source of ctx.sources) {
    await writeFile(join(ctx.providerRoot, source), randomBytes(OBJECT_SIZE).toString('base64').slice(0, OBJECT_SIZE), {
      mode: 0o600,
    });
  }
}

async function contentsMatch(ctx: Ctx, v: Volume): Promise<boolean> {
  for (const [i, source] of ctx.sources.entries()) {
    const name = `secret-${String(i).padStart(3, '0')}`;
    const [got, want] = await Promise.all([readFile(join(v.target, name)), readFile(join(ctx.providerRoot, source))]);
    if (!got.equals(want)) return false;
  }
  return true;
}

/**
 * One driver with N volumes: publish them, let the reconciler run on its own, then pause
 * the driver (SIGSTOP) right after a round until every volume is due, resume it (SIGCONT)
 * and measure the round that follows: first with nothing changed, then after rewriting
 * every source file.
 */
async function measureVolumes(ctx: Ctx, n: number, mode: Mode, kube: BenchCluster | undefined): Promise<CaseResult> {
  checkInterrupted();
  const socket = join(ctx.work, `csi-rotation-${mode}-${n}.sock`);
  // Kubernetes mode: an empty --spc-dir, the cluster's driver kubeconfig (bound by deploy/ RBAC), and Secret sync on.
  const driver = kube
    ? await startDriver(ctx.work, socket, '', ctx.mountMode, ctx.cpuProfDir, [
        ...ROTATION_FLAGS,
        `--kubeconfig=${kube.kubeconfig}`,
        '--enable-secret-sync',
      ])
    : await startDriver(ctx.work, socket, ctx.spcDir, ctx.mountMode, ctx.cpuProfDir, ROTATION_FLAGS);
  ctx.processes.push(driver);
  const driverMetricsPort = loggedPort(driver, 'metricsPort');
  const client = new CsiClient(socket);
  const volumes = new Volumes(
    client,
    join(ctx.work, `kubelet-${mode}-${n}`),
    ctx.spcName,
    SETUP_CONCURRENCY,
    interrupt.signal,
  );
  const label = `${n} volumes${mode === 'kubernetes' ? ' (Kubernetes mode)' : ''}`;
  const startedAt = Date.now();
  const observedRounds: ObservedRound[] = [];
  let phase = 'publishing';
  const offObserver = driver.onLine((line) => {
    const l = parseLogLine(line);
    if (l?.message === 'rotation round done')
      observedRounds.push({ atSeconds: Math.round((Date.now() - startedAt) / 10) / 100, phase, ...asRound(l) });
  });
  const pauser = new DriverPause(driver);
  return withDriverSession(
    driver,
    client,
    () => volumes.unpublishAll(),
    progress,
    async () => {
      try {
        if (!(await client.probe())) throw new Error('driver Probe: not ready');
        const pods = kube
          ? await kube.createPods(n, 'bench-node', ctx.spcName, VOLUME_NAME, `bench-${n}`)
          : localPods(n);
        progress(
          `${label}: publishing ${n} × ${OBJECTS_PER_VOLUME} objects (rotation every ${POLL_INTERVAL}, rounds run meanwhile)`,
        );
        const t0 = performance.now();
        const vols = await volumes.publish(pods);
        const publishSeconds = Math.round((performance.now() - t0) / 100) / 10;
        check(
          ctx,
          'published-contents-match-provider',
          (await contentsMatch(ctx, vols[0]!)) && (await contentsMatch(ctx, vols[vols.length - 1]!)),
          'a published volume differs from the provider files',
        );

        // Wait for the reconciler's next round (it runs on its own timer), then pause the driver
        // right after it: the following round is at least 1 s away, so none is in progress.
        phase = 'after publishing';
        await nextRound(driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal }).round;
        let { counters: driverBefore, apiRequests: apiRequestsBefore } = driverMetrics(await scrape(driverMetricsPort));
        pauser.pause();

        const rows: RotationRow[] = [];
        for (const kind of ['unchanged', 'changed'] as const) {
          if (kind === 'changed') await rewriteSources(ctx); // while paused: no round sees half a change
          const linksBefore = await dataLinks(vols);
          const providerBefore = metricSum(await scrape(ctx.providerMetricsPort), 'provider_mount_total');
          // Every volume's last attempt is before `stoppedAt`; it is due at most interval + 10 % later.
          const deadline = pauser.stoppedAt + POLL_INTERVAL_MS * (1 + JITTER_FRACTION) + HOLD_MARGIN_MS;
          progress(
            `${label}: driver paused after a round; holding ${((deadline - Date.now()) / 1000).toFixed(1)} s so all ${n} are due, then measuring the ${kind} round`,
          );
          await holdUntil(deadline, interrupt.signal);
          phase = `measured ${kind}`;
          const rotated = new Set<string>();
          const waiter = nextRound(driver, {
            timeoutMs: ROUND_TIMEOUT_MS,
            signal: interrupt.signal,
            onRotated: (t) => rotated.add(t),
          });
          const heldMs = Date.now() - pauser.stoppedAt;
          const [driverCpuBefore, providerCpuBefore] = await Promise.all([
            processCpuMs(driver.pid),
            processCpuMs(ctx.providerPid),
          ]);
          const apiBefore = kube ? { writes: await kube.apiWrites(), events: await kube.eventCount() } : undefined;
          pauser.resume();
          const round = await waiter.round;
          const [driverCpuAfter, providerCpuAfter] = await Promise.all([
            processCpuMs(driver.pid),
            processCpuMs(ctx.providerPid),
          ]);
          const mem = await processMemory(driver.pid);
          const {
            counters: driverAfter,
            heapUsedMiB,
            heapTotalMiB,
            apiRequests: apiRequestsAfter,
          } = driverMetrics(await scrape(driverMetricsPort));
          pauser.pause();
          phase = 'paused';
          const fileWrites = countMoved(linksBefore, await dataLinks(vols));
          // The driver is paused and wrote everything before its "round done" line (pod status,
          // Secrets and Events are awaited within each refresh).
          const apiWritesByResource = kube && apiBefore ? delta(apiBefore.writes, await kube.apiWrites()) : null;
          const events = kube && apiBefore ? (await kube.eventCount()) - apiBefore.events : null;
          const providerMountCalls =
            metricSum(await scrape(ctx.providerMetricsPort), 'provider_mount_total') - providerBefore;
          const row: RotationRow = {
            id: `rotation-${mode === 'kubernetes' ? 'kubernetes-' : ''}${n}-${kind}`,
            mode,
            volumes: n,
            kind,
            round,
            providerMountCalls,
            fileWrites,
            volumesRotatedLogged: rotated.size,
            reconcileMetrics: {
              rotatedFalse: driverAfter.rotatedFalse - driverBefore.rotatedFalse,
              rotatedTrue: driverAfter.rotatedTrue - driverBefore.rotatedTrue,
              errors: driverAfter.errors - driverBefore.errors,
            },
            driverCpuMs: driverCpuAfter - driverCpuBefore,
            providerCpuMs: providerCpuAfter - providerCpuBefore,
            driverRssMiB: mib(mem.rssKiB),
            driverPeakMiB: mib(mem.hwmKiB),
            driverHeapUsedMiB: heapUsedMiB,
            driverHeapTotalMiB: heapTotalMiB,
            apiWrites: apiWritesByResource ? Object.values(apiWritesByResource).reduce((a, b) => a + b, 0) : null,
            apiWritesByResource,
            apiRequests: kube ? apiRequestsAfter - apiRequestsBefore : null,
            events,
            heldMs,
          };
          rows.push(row);
          driverBefore = driverAfter;
          apiRequestsBefore = apiRequestsAfter;
          progress(
            `${label}, ${kind}: round ${round.durationMs} ms, refreshed ${round.refreshed}/${round.volumes}, changed ${round.changed}, failed ${round.failed}, provider Mounts ${providerMountCalls}, file writes ${fileWrites}, CPU driver ${row.driverCpuMs} ms provider ${row.providerCpuMs} ms, RSS ${row.driverRssMiB} MiB (heap ${heapUsedMiB} used of ${heapTotalMiB})${kube ? `, API requests ${row.apiRequests}, writes ${row.apiWrites} ${JSON.stringify(apiWritesByResource)}, events ${events}` : ''}`,
          );

          const want = kind === 'changed' ? n : 0;
          check(
            ctx,
            'round-covers-all-volumes',
            round.volumes === n && round.refreshed === n,
            `${n} volumes, ${kind}: round listed ${round.volumes} and refreshed ${round.refreshed}`,
          );
          check(
            ctx,
            'round-without-failures',
            round.failed === 0 && row.reconcileMetrics.errors === 0,
            `${n} volumes, ${kind}: ${round.failed} failed`,
          );
          check(
            ctx,
            `${kind}-round-changes-${kind === 'changed' ? 'all' : 'none'}`,
            round.changed === want && fileWrites === want && rotated.size === want,
            `${n} volumes: changed ${round.changed}, file writes ${fileWrites}, 'volume rotated' lines ${rotated.size}; want ${want}`,
          );
          check(
            ctx,
            'one-provider-mount-per-volume',
            providerMountCalls === n,
            `${n} volumes, ${kind}: ${providerMountCalls} provider Mount calls`,
          );
          check(
            ctx,
            'metrics-match-log',
            row.reconcileMetrics.rotatedTrue === round.changed &&
              row.reconcileMetrics.rotatedFalse === round.refreshed - round.changed,
            `${n} volumes, ${kind}: rotation_reconcile_total deltas ${JSON.stringify(row.reconcileMetrics)}`,
          );
          if (kube && kind === 'unchanged')
            check(
              ctx,
              'unchanged-round-no-api-requests-or-events',
              row.apiRequests === 0 && row.apiWrites === 0 && row.events === 0,
              `${label}, unchanged: ${row.apiRequests} API requests, ${row.apiWrites} API writes ${JSON.stringify(apiWritesByResource)}, ${row.events} events`,
            );
          if (kube && kind === 'changed')
            check(
              ctx,
              'changed-round-writes-status-and-events',
              (apiWritesByResource?.['secretproviderclasspodstatuses'] ?? 0) >= n && (row.events ?? 0) >= n,
              `${label}, changed: API writes ${JSON.stringify(apiWritesByResource)}, ${row.events} events`,
            );
          if (kind === 'changed')
            check(
              ctx,
              'changed-contents-match-provider',
              (await contentsMatch(ctx, vols[0]!)) && (await contentsMatch(ctx, vols[vols.length - 1]!)),
              'a rotated volume differs from the new provider files',
            );
        }
        return { rows, observedRounds, publishSeconds };
      } finally {
        offObserver();
        pauser.resume(); // never leave a stopped process behind: it would not even see SIGTERM
      }
    },
  );
}

interface RotationResults extends BenchRunHeader<'rotation'> {
  readonly mountMode: MountMode;
  readonly mountModeReason: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly rounds: readonly RotationRow[];
  readonly observedRounds: Readonly<Record<string, readonly ObservedRound[]>>;
  readonly publishSeconds: Readonly<Record<string, number>>;
  readonly targets: readonly Target[];
  readonly checks: Readonly<Record<string, boolean>>;
}

function targetFor(row: RotationRow, targets: readonly Target[]): string {
  const cells: string[] = [];
  if (row.volumes === 500 && row.kind === 'unchanged')
    cells.push(`≤ 2 s, 0 writes: ${unchangedRoundOk(row) ? 'ok' : 'MISSED'}`);
  if (row.volumes === 500) {
    const t = targets.find((x) => x.id === 'rss-500')!;
    cells.push(`RSS ≤ ${t.limit} MiB: ${row.driverRssMiB <= t.limit ? 'ok' : 'MISSED'}`);
  }
  return cells.join('; ');
}

function formatReport(r: RotationResults): string {
  const head = [
    `secrets-store-csi rotation benchmark  ${r.startedAt}`,
    machineLine(r),
    `modes: ${String(r.config['modes'])}${r.config['kubernetesSkipped'] ? ` (Kubernetes mode skipped: ${String(r.config['kubernetesSkipped'])})` : ''}; file provider, mount mode ${r.mountMode} (${r.mountModeReason}); node flags: ${nodeFlagsText(r.config['nodeFlags'])}; ${OBJECTS_PER_VOLUME} objects × ${OBJECT_SIZE} B per volume; --rotation-poll-interval=${POLL_INTERVAL}; one measured round per row (driver paused until all volumes were due)`,
    ...(r.config['cpuProfileDir']
      ? [
          `CPU profiling on (${String(r.config['cpuProfileDir'])}): timings are inflated, rotation-latest.json is not updated`,
        ]
      : []),
    '',
  ];
  const rows = table(
    [
      'mode',
      'volumes',
      'round',
      'round ms',
      'CPU ms driver/provider',
      'refreshed',
      'changed',
      'provider Mounts',
      'file writes',
      'RSS MiB',
      'API requests / writes / events',
      'target',
    ],
    r.rounds.map((row) => [
      row.mode,
      String(row.volumes),
      row.kind,
      String(row.round.durationMs),
      `${row.driverCpuMs}/${row.providerCpuMs}`,
      `${row.round.refreshed}/${row.round.volumes}`,
      String(row.round.changed),
      String(row.providerMountCalls),
      String(row.fileWrites),
      row.driverRssMiB.toFixed(1),
      row.apiWrites === null ? NOT_LOCAL : `${row.apiRequests} / ${row.apiWrites} / ${row.events}`,
      targetFor(row, r.targets),
    ]),
    new Set([1, 3, 4, 5, 6, 7, 8, 9]),
  );
  const failedChecks = Object.entries(r.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  const tail = [
    '',
    `targets: ${r.targets.map((t) => `${t.description} ${t.status}${t.status === 'n/a' && t.note ? ` (${t.note})` : ''}`).join('; ')}`,
    failedChecks.length
      ? `CHECKS FAILED: ${failedChecks.join(', ')}`
      : `checks: ${Object.keys(r.checks).join(', ')} passed`,
  ];
  return [...head, rows, ...tail].join('\n');
}

/** The unchanged-round target for one row: time, and no file writes (nor API writes or Events in Kubernetes mode). */
function unchangedRoundOk(r: RotationRow): boolean {
  return (
    r.round.durationMs <= TARGET_UNCHANGED_500_MS &&
    r.round.refreshed === r.volumes &&
    r.fileWrites === 0 &&
    (r.apiWrites ?? 0) === 0 &&
    (r.events ?? 0) === 0
  );
}

function targets(rows: readonly RotationRow[]): Target[] {
  const unchangedRows = rows.filter((r) => r.volumes === 500 && r.kind === 'unchanged');
  const unchanged =
    unchangedRows.length > 0
      ? unchangedRows.reduce((a, b) => (b.round.durationMs > a.round.durationMs ? b : a))
      : undefined;
  const at500 = rows.filter((r) => r.volumes === 500);
  const none = 'no 500-volume case (BENCH_ROTATION_VOLUMES)';
  const status = (applies: boolean, ok: boolean): TargetStatus => (applies ? (ok ? 'ok' : 'MISSED') : 'n/a');
  const worstRss = Math.max(0, ...at500.map((r) => r.driverRssMiB));
  return [
    {
      id: 'unchanged-500-round',
      description: `unchanged round over 500 volumes ≤ ${TARGET_UNCHANGED_500_MS / 1000} s with 0 file writes (and 0 API writes, 0 events in Kubernetes mode)`,
      limit: TARGET_UNCHANGED_500_MS,
      unit: 'ms',
      value: unchanged?.round.durationMs ?? 0,
      status: status(unchanged !== undefined, unchangedRows.every(unchangedRoundOk)),
      ...(unchanged ? {} : { note: none }),
    },
    {
      id: 'rss-500',
      description: `driver RSS with 500 volumes ≤ ${TARGET_RSS_500_MIB} MiB`,
      limit: TARGET_RSS_500_MIB,
      unit: 'MiB',
      value: worstRss,
      status: status(at500.length > 0, worstRss <= TARGET_RSS_500_MIB),
      ...(at500.length ? {} : { note: none }),
    },
  ];
}

async function main(): Promise<void> {
  const run = await startBenchRun('rotation', REPO_DIR);
  const counts = volumeCounts();
  const cpuProfDir = process.env['BENCH_CPU_PROF'] || undefined;
  const { mode: mountMode, reason: mountModeReason } = chooseMountMode();
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-rotation-'));
  const processes: BenchProcess[] = [];
  const checks: Record<string, boolean> = {};
  interrupt.listen();
  const rows: RotationRow[] = [];
  const observedRounds: Record<string, ObservedRound[]> = {};
  const publishSeconds: Record<string, number> = {};
  const wantedModes = modes();
  const kubernetesSkipped = wantedModes.includes('kubernetes') ? kubernetesUnavailable() : undefined;
  if (kubernetesSkipped) progress(`Kubernetes mode skipped: ${kubernetesSkipped}`);
  const runModes = wantedModes.filter((m) => m === 'local' || !kubernetesSkipped);
  let kube: BenchCluster | undefined;
  try {
    progress(`working in ${work}, mount mode ${mountMode} (${mountModeReason}), volumes ${counts.join(', ')}`);
    const providerRoot = join(work, 'provider-root');
    const sources = await writeObjects(providerRoot, OBJECTS_PER_VOLUME, OBJECT_SIZE);
    const spcDir = join(work, 'spc');
    const spcName = await writeSecretProviderClass(spcDir, OBJECTS_PER_VOLUME, sources);
    await mkdir(join(work, 'providers'), { recursive: true });
    if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
    const provider = await startFileProvider(work, providerRoot, cpuProfDir, ['--health-addr=127.0.0.1:0']);
    processes.push(provider);
    const ctx: Ctx = {
      work,
      mountMode,
      providerRoot,
      sources,
      spcDir,
      spcName,
      objectsYaml: objectsParameter(sources),
      providerMetricsPort: loggedPort(provider, 'healthPort'),
      providerPid: provider.pid,
      cpuProfDir,
      processes,
      checks,
    };
    for (const mode of runModes) {
      if (mode === 'kubernetes') {
        progress('Kubernetes mode: starting etcd and kube-apiserver (test/peers/kube/start-cluster.sh)');
        kube = await startBenchCluster(spcName, ctx.objectsYaml, objectNames(sources));
      }
      for (const n of counts) {
        const result = await measureVolumes(ctx, n, mode, kube);
        rows.push(...result.rows);
        const key = mode === 'local' ? String(n) : `kubernetes-${n}`;
        observedRounds[key] = result.observedRounds;
        publishSeconds[key] = result.publishSeconds;
      }
    }
    if (!provider.running) throw new Error(`the file provider exited:\n${provider.stderrTail()}`);
  } finally {
    for (const p of processes.reverse()) {
      if (p.running) process.kill(p.pid, 'SIGCONT');
      await p.stop().catch(() => undefined);
    }
    await kube?.stop().catch(() => undefined);
    await removeWorkDir(work, progress);
    interrupt.release();
  }

  const results: RotationResults = {
    ...run.finish(),
    mountMode,
    mountModeReason,
    config: {
      volumes: counts,
      objectsPerVolume: OBJECTS_PER_VOLUME,
      objectSizeBytes: OBJECT_SIZE,
      provider: 'file',
      modes: runModes
        .map((m) =>
          m === 'local'
            ? 'local (--spc-dir)'
            : 'kubernetes (real etcd + kube-apiserver, deploy/ RBAC, --enable-secret-sync)',
        )
        .join(', '),
      kubernetesSkipped: kubernetesSkipped ?? null,
      nodeFlags: benchNodeFlags(),
      driverFlags: ROTATION_FLAGS,
      kubernetesDriverFlags: ['--kubeconfig=<cluster>', '--enable-secret-sync'],
      driverLogLevel: 'info',
      measuredRound:
        'the first round after the driver was paused (SIGSTOP) right after a round and resumed once every volume was due (interval + 10 % jitter + margin)',
      holdMarginMs: HOLD_MARGIN_MS,
      setupConcurrency: SETUP_CONCURRENCY,
      roundTime: 'durationMs of the driver\'s "rotation round done" log line',
      providerMountCalls: "delta of provider_mount_total on the provider's --health-addr /metrics",
      fileWrites: 'volumes whose ..data link moved',
      apiWritesAndEvents:
        "Kubernetes mode: delta of kube-apiserver apiserver_request_total over POST/PUT/PATCH/DELETE/APPLY (leases left out) and of the namespace's Events, read while the driver is paused after the round; null in local mode",
      apiRequests:
        "Kubernetes mode: delta of the driver's own rest_client_requests_total (every request it made, reads included) across the round; null in local mode",
      cpuProfileDir: cpuProfDir ?? null,
    },
    rounds: rows,
    observedRounds,
    publishSeconds,
    targets: targets(rows),
    checks,
  };
  // Profiled timings are inflated; other node flags are an experiment, not the product.
  const files = await writeBenchResults(RESULTS_DIR, 'rotation', results, !cpuProfDir && usesImageNodeFlags());
  process.stdout.write(`${formatReport(results)}\n`);
  progress(`wrote ${files.join(' and ')}`);
}

runBench('rotation', main);
