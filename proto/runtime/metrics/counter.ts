import { sampleLine } from './exposition.js';
import { Metric, type LabelValues, type MetricOptions, type Series } from './metric.js';

interface CounterSeries extends Series {
  value: number;
}

const newSeries = (labelText: string): CounterSeries => ({ labelText, value: 0 });

/** A Prometheus counter: a value per label set that only goes up. */
export class Counter<T extends string = string> extends Metric<T, CounterSeries> {
  readonly type = 'counter';

  constructor(options: MetricOptions<T>) {
    super(options);
    this.register(options);
  }

  /** Adds `value` (default 1; 0 makes the series appear) to the series of `labels`. */
  inc(labels?: LabelValues<T> | number, value?: number): void {
    if (typeof labels !== 'object' || labels === null) {
      value = labels;
      labels = {};
    }
    const by = value ?? 1;
    if (!Number.isFinite(by)) throw new TypeError(`Value is not a valid number: ${String(by)}`);
    if (by < 0) throw new Error('It is not possible to decrease a counter');
    this.seriesOf(labels, newSeries).value += by;
  }

  reset(): void {
    this.series = new Map();
    // A counter without labels always has its one series, from 0.
    if (this.labelNames.length === 0) this.series.set('', { labelText: '', value: 0 });
  }

  sampleLines(): string[] {
    return [...this.series.values()].map((s) => sampleLine(this.name, s.labelText, s.value));
  }
}
