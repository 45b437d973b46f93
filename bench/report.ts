import { mkdir, rename, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { machineInfo, type MachineInfo } from './proc.js';
import type { LatencySummary } from './stats.js';

/** How a report prints the node flags recorded in its config. */
export function nodeFlagsText(flags: unknown): string {
  return Array.isArray(flags) && flags.length > 0 ? flags.join(' ') : 'none';
}

export type TargetStatus = 'ok' | 'MISSED' | 'n/a';

/** A goal the numbers are compared with; benchmarks report, they do not fail. */
export interface Target {
  readonly id: string;
  readonly description: string;
  readonly limit: number;
  readonly unit: 'ms' | 'MiB';
  readonly value: number;
  readonly status: TargetStatus;
  readonly note?: string;
}

export interface LatencyRow {
  readonly id: string;
  readonly label: string;
  readonly objects: number;
  readonly latencyMs: LatencySummary;
  readonly targetId?: string;
  /**
   * CPU time per call (ms, user + system, all threads) of the driver and the provider,
   * steadier than latency on a shared machine. For new-target publishes it covers the
   * publish and the unpublish that follows it.
   */
  readonly cpuMsPerCall?: { readonly driver: number; readonly provider: number };
  /** Driver memory when the case finished (its own driver process). */
  readonly driverMemoryAfter?: { readonly rssMiB: number; readonly peakMiB: number };
}

export interface MemoryRow {
  readonly id: string;
  readonly label: string;
  readonly rssMiB: number;
  readonly peakMiB: number;
  readonly targetId?: string;
}

/** What every benchmark's results JSON starts with. */
export interface BenchRunHeader<B extends string> {
  readonly schema: 1;
  readonly benchmark: B;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationSeconds: number;
  readonly machine: MachineInfo;
  /** Other work on the machine skews the numbers: the 1-minute load average before and after. */
  readonly loadAverage1m: { readonly before: number; readonly after: number };
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Starts a benchmark's clock (machine facts, load average); `finish()` gives the results header at the end. */
export async function startBenchRun<B extends string>(
  benchmark: B,
  repoDir: string,
): Promise<{ readonly machine: MachineInfo; finish(): BenchRunHeader<B> }> {
  const started = new Date();
  const loadBefore = loadavg()[0] ?? 0;
  const machine = await machineInfo(repoDir);
  return {
    machine,
    finish: () => {
      const finished = new Date();
      return {
        schema: 1,
        benchmark,
        startedAt: started.toISOString(),
        finishedAt: finished.toISOString(),
        durationSeconds: Math.round((finished.getTime() - started.getTime()) / 100) / 10,
        machine,
        loadAverage1m: { before: round2(loadBefore), after: round2(loadavg()[0] ?? 0) },
      };
    },
  };
}

/** The report's `machine:` line. */
export function machineLine(r: BenchRunHeader<string>): string {
  const m = r.machine;
  const processes = m.processNode
    ? `, driver and providers on node ${m.processNode.version} (${m.processNode.source === 'image' ? "the images'" : m.processNode.source}${m.processNode.note ? `: ${m.processNode.note}` : ''})`
    : '';
  return `machine: ${m.cpuModel} × ${m.cpuCount}, ${m.totalMemMiB} MiB, node ${m.nodeVersion}${processes}, ${m.platform} ${m.kernel}; load avg ${r.loadAverage1m.before} → ${r.loadAverage1m.after}; commit ${m.gitCommit?.slice(0, 7) ?? 'unknown'}${m.gitDirty ? ' (dirty)' : ''}`;
}

export interface BenchResults extends BenchRunHeader<'publish'> {
  readonly mountMode: 'tmpfs' | 'dir';
  readonly mountModeReason: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly latency: readonly LatencyRow[];
  readonly memory: readonly MemoryRow[];
  readonly targets: readonly Target[];
  readonly checks: Readonly<Record<string, boolean>>;
}

export function checkTarget(
  id: string,
  description: string,
  value: number,
  limit: number,
  unit: 'ms' | 'MiB',
  applies: boolean,
  note?: string,
): Target {
  return {
    id,
    description,
    limit,
    unit,
    value,
    status: applies ? (value <= limit ? 'ok' : 'MISSED') : 'n/a',
    ...(note ? { note } : {}),
  };
}

function targetCell(targets: readonly Target[], id: string | undefined): string {
  const t = targets.find((x) => x.id === id);
  if (!t) return '';
  const what = t.unit === 'ms' ? `p50 ≤ ${t.limit} ms` : `≤ ${t.limit} MiB`;
  return `${what}: ${t.status}${t.status === 'n/a' && t.note ? ` (${t.note})` : ''}`;
}

const ms = (x: number): string => x.toFixed(2);

export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: ReadonlySet<number>,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (r: readonly string[]) =>
    r
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}

/** The human-readable report printed to stdout. */
export function formatReport(r: BenchResults): string {
  const head = [
    `secrets-store-csi publish benchmark  ${r.startedAt}`,
    machineLine(r),
    `mount mode: ${r.mountMode} (${r.mountModeReason}); objects of ${String(r.config['objectSizeBytes'])} bytes, file provider, sequential calls; node flags: ${nodeFlagsText(r.config['nodeFlags'])}`,
    ...(r.config['cpuProfileDir']
      ? [`CPU profiling on (${String(r.config['cpuProfileDir'])}): timings are inflated, latest.json is not updated`]
      : []),
    '',
  ];
  const latency = table(
    ['case', 'n', 'p50 ms', 'p99 ms', 'mean ms', 'min', 'max', 'CPU ms/call driver/provider', 'target'],
    r.latency.map((row) => [
      row.label,
      String(row.latencyMs.n),
      ms(row.latencyMs.p50),
      ms(row.latencyMs.p99),
      ms(row.latencyMs.mean),
      ms(row.latencyMs.min),
      ms(row.latencyMs.max),
      row.cpuMsPerCall ? `${ms(row.cpuMsPerCall.driver)}/${ms(row.cpuMsPerCall.provider)}` : '',
      targetCell(r.targets, row.targetId),
    ]),
    new Set([1, 2, 3, 4, 5, 6, 7]),
  );
  const memory = table(
    ['driver memory', 'RSS MiB', 'peak MiB', 'target'],
    r.memory.map((row) => [
      row.label,
      row.rssMiB.toFixed(1),
      row.peakMiB.toFixed(1),
      targetCell(r.targets, row.targetId),
    ]),
    new Set([1, 2]),
  );
  const failedChecks = Object.entries(r.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  const tail = [
    '',
    `targets: ${r.targets.map((t) => `${t.description} ${t.status}`).join('; ')}`,
    failedChecks.length
      ? `CHECKS FAILED: ${failedChecks.join(', ')}`
      : `checks: ${Object.keys(r.checks).join(', ')} passed`,
  ];
  return [...head, latency, '', memory, ...tail].join('\n');
}

export async function writeJson(path: string, value: unknown): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(tmp, path);
}

/** Writes results/publish-<timestamp>.json and results/latest.json; returns both paths. */
export async function writeResults(
  resultsDir: string,
  r: BenchResults,
  options: { latest: boolean },
): Promise<string[]> {
  await mkdir(resultsDir, { recursive: true });
  // ISO 8601 with ':' replaced, so the name is valid everywhere: publish-2026-11-22T00-23-10.123Z.json
  const stamped = join(resultsDir, `publish-${r.startedAt.replace(/:/g, '-')}.json`);
  const latest = join(resultsDir, 'latest.json');
  await writeJson(stamped, r);
  if (!options.latest) return [stamped];
  await writeJson(latest, r);
  return [stamped, latest];
}

/** A positive integer from the environment variable `name`, or `fallback` when unset or empty. */
export function positiveIntEnv(name: string, fallback: number): number {
  return intEnv(name, fallback, 1, 'a positive integer');
}

/** A non-negative integer from the environment variable `name`, or `fallback` when unset or empty. */
export function nonNegativeIntEnv(name: string, fallback: number): number {
  return intEnv(name, fallback, 0, 'a non-negative integer');
}

function intEnv(name: string, fallback: number, min: number, what: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be ${what}, got "${raw}"`);
  return n;
}

/**
 * Writes `results` as results/<prefix>-<startedAt>.json and, when `latest`, as
 * results/<prefix>-latest.json (JSON before any table: a closed stdout must not lose the
 * results); returns the paths written.
 */
export async function writeBenchResults(
  resultsDir: string,
  prefix: string,
  results: { readonly startedAt: string },
  latest: boolean,
): Promise<string[]> {
  await mkdir(resultsDir, { recursive: true });
  // ISO 8601 with ':' replaced, so the name is valid everywhere.
  const stamped = join(resultsDir, `${prefix}-${results.startedAt.replace(/:/g, '-')}.json`);
  await writeJson(stamped, results);
  if (!latest) return [stamped];
  const latestPath = join(resultsDir, `${prefix}-latest.json`);
  await writeJson(latestPath, results);
  return [stamped, latestPath];
}

/** Runs a benchmark's main: a failure prints `bench <name> failed:` with the first stack frames and sets exit code 1. */
export function runBench(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const e = err instanceof Error ? err : new Error(String(err));
    const frames = (e.stack ?? '')
      .split('\n')
      .filter((l) => l.trimStart().startsWith('at '))
      .slice(0, 6)
      .join('\n');
    process.stderr.write(`bench ${name} failed: ${e.message}\n${frames}\n`);
    process.exitCode = 1;
  });
}
