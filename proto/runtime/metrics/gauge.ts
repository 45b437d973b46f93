import { formatLabels, sampleLine } from './exposition.js';
import { Metric, type LabelValues, type MetricOptions, type Series } from './metric.js';

interface GaugeSeries extends Series {
  value: number;
}

const newSeries = (labelText: string): GaugeSeries => ({ labelText, value: 0 });

/** A Prometheus gauge: a value per label set, set or moved either way. */
export class Gauge<T extends string = string> extends Metric<T, GaugeSeries> {
  readonly type = 'gauge';

  constructor(options: MetricOptions<T>) {
    super(options);
    this.register(options);
  }

  /** Sets the series of `labels` to `value` (NaN allowed: it is written as "Nan"). */
  set(labels: LabelValues<T> | number, value?: number): void {
    const [given, v] = isLabels(labels) ? [labels, value] : [{}, labels];
    if (typeof v !== 'number') throw new TypeError(`Value is not a valid number: ${String(v)}`);
    const series = this.seriesOf(given, newSeries);
    series.value = v;
    // The latest label set's key order is the one written.
    series.labelText = formatLabels(given);
  }

  /** Adds `value` (default 1) to the series of `labels`. */
  inc(labels?: LabelValues<T> | number, value?: number): void {
    this.add(labels, value, 1);
  }

  /** Subtracts `value` (default 1) from the series of `labels`. */
  dec(labels?: LabelValues<T> | number, value?: number): void {
    this.add(labels, value, -1);
  }

  reset(): void {
    this.series = new Map();
    if (this.labelNames.length === 0) this.series.set('', { labelText: '', value: 0 });
  }

  sampleLines(): string[] {
    return [...this.series.values()].map((s) => sampleLine(this.name, s.labelText, s.value));
  }

  private add(labels: LabelValues<T> | number | undefined, value: number | undefined, sign: 1 | -1): void {
    const [given, v] = isLabels(labels) ? [labels, value ?? 1] : [{}, labels ?? 1];
    if (typeof v !== 'number') throw new TypeError(`Delta is not a valid number: ${String(v)}`);
    this.seriesOf(given, newSeries).value += sign * v;
  }
}

function isLabels<T extends string>(labels: LabelValues<T> | number | undefined | null): labels is LabelValues<T> {
  return typeof labels === 'object' && labels !== null;
}
