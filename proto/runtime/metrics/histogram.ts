import { formatLabels, sampleLine } from './exposition.js';
import { Metric, type LabelValues, type MetricOptions, type Series } from './metric.js';

interface HistogramSeries extends Series {
  /** Observations per bucket (not cumulative), one slot per upper bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** prom-client's default buckets, for a histogram created without its own. */
const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Options of a histogram: its bucket upper bounds, ascending (+Inf is implied). */
export interface HistogramOptions<T extends string> extends MetricOptions<T> {
  readonly buckets?: readonly number[];
}

/** A Prometheus histogram: cumulative `_bucket{le}` counts, `_sum` and `_count` per label set. */
export class Histogram<T extends string = string> extends Metric<T, HistogramSeries> {
  readonly type = 'histogram';
  private readonly buckets: readonly number[];
  private readonly leTexts: readonly string[];

  constructor(options: HistogramOptions<T>) {
    super(options);
    if ((options.labelNames as readonly string[] | undefined)?.includes('le')) throw new Error('le is a reserved label keyword');
    const buckets = options.buckets ?? DEFAULT_BUCKETS;
    if (buckets.some((b, i) => i > 0 && !(b > (buckets[i - 1] as number)))) throw new Error(`histogram ${options.name}: buckets must be ascending`);
    this.buckets = [...buckets];
    this.leTexts = [...buckets.map((b) => `le="${b}"`), 'le="+Inf"'];
    this.register(options);
    // A histogram without labels starts with its one series at zero; reset() leaves none (as prom-client).
    if (this.labelNames.length === 0) this.zero({});
  }

  /** Records `value` (seconds, bytes…) in the series of `labels`. */
  observe(labels: LabelValues<T> | number, value?: number): void {
    const [given, v] = typeof labels === 'number' ? [{}, labels] : [labels ?? {}, value];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`Value is not a valid number: ${String(v)}`);
    const series = this.seriesOf(given, this.emptySeries);
    for (let i = 0; i < this.buckets.length; i++) {
      if (v <= (this.buckets[i] as number)) {
        (series.counts[i] as number) += 1;
        break;
      }
    }
    series.sum += v;
    series.count += 1;
  }

  /** Makes the series of `labels` appear with zero counts. */
  zero(labels: LabelValues<T>): void {
    this.series.set(this.keyOf(labels), this.emptySeries(formatLabels(labels)));
  }

  reset(): void {
    this.series = new Map();
  }

  sampleLines(): string[] {
    const lines: string[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      // le comes first, then the series' labels (prom-client's order).
      const suffix = s.labelText === '' ? '' : `,${s.labelText}`;
      let cumulative = 0;
      this.buckets.forEach((_, i) => {
        cumulative += s.counts[i] as number;
        lines.push(sampleLine(bucketName, `${this.leTexts[i] as string}${suffix}`, cumulative));
      });
      lines.push(sampleLine(bucketName, `${this.leTexts[this.buckets.length] as string}${suffix}`, s.count));
      lines.push(sampleLine(`${this.name}_sum`, s.labelText, s.sum));
      lines.push(sampleLine(`${this.name}_count`, s.labelText, s.count));
    }
    return lines;
  }

  private readonly emptySeries = (labelText: string): HistogramSeries => ({ labelText, counts: this.buckets.map(() => 0), sum: 0, count: 0 });
}
