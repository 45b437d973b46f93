/** Summary of a set of latency samples, all in milliseconds. */
export interface LatencySummary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/**
 * Nearest-rank percentile of already sorted samples: the smallest sample such that at
 * least `p` percent of the samples are less than or equal to it. With n = 50, p99 is the max.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** p50, p99, mean, min and max of `samples` (ms). */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sum / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}

/** Rounds for JSON output: microsecond precision is plenty for millisecond timings. */
export function rounded(s: LatencySummary): LatencySummary {
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { n: s.n, p50: r(s.p50), p99: r(s.p99), mean: r(s.mean), min: r(s.min), max: r(s.max) };
}

/** The median of `xs` (the mean of the middle two when their count is even). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no samples');
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The number after `name` in a benchmark's command line, or `fallback` when `name` is absent.
 * A value that is not a finite number ≥ `min` throws an error naming the option.
 */
export function numberOption(args: readonly string[], name: string, fallback: number, min = 0): number {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const text = args[at + 1];
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(value) || value < min) {
    throw new Error(
      `${name}: expected a number ≥ ${min}, got ${text === undefined ? 'nothing' : JSON.stringify(text)}`,
    );
  }
  return value;
}

/** `after - before` per key, leaving out zeros. */
export function delta(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[key] ?? 0) - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}
