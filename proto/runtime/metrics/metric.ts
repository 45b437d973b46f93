import { formatLabels, type Labels } from './exposition.js';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A metric's label values by label name (a label left out is not written). */
export type LabelValues<T extends string> = Partial<Record<T, string | number>>;

/** What a Registry needs of a metric: its header, a hook run before reading, its sample lines. */
export interface Collectable {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** Updates values that are read, not counted (process and Node.js metrics); runs at every scrape. */
  collect(): void;
  /** The sample lines, in the order their series were first seen. */
  sampleLines(): string[];
  /** Forgets every series (a metric without labels goes back to 0). */
  reset(): void;
}

/** Where a metric registers itself. */
export interface MetricRegistrar {
  registerMetric(metric: Collectable): void;
}

/** Options shared by every metric kind (prom-client's names, so call sites read the same). */
export interface MetricOptions<T extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly T[];
  /** The registries serving it; none: the metric is kept but not exported. */
  readonly registers?: readonly MetricRegistrar[];
  /** Run at each scrape before the values are read. */
  readonly collect?: () => void;
}

/** One label set of a metric, with its label text written once. */
export interface Series {
  labelText: string;
}

/** What every metric kind shares: validation, label sets and their series. */
export abstract class Metric<T extends string, S extends Series> implements Collectable {
  readonly name: string;
  readonly help: string;
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected readonly labelNames: readonly T[];
  private readonly declared: ReadonlySet<string>;
  private readonly sortedLabelNames: readonly T[];
  private readonly onCollect: (() => void) | undefined;
  protected series = new Map<string, S>();

  constructor(options: MetricOptions<T>) {
    if (!options.help) throw new Error('Missing mandatory help parameter');
    if (!options.name) throw new Error('Missing mandatory name parameter');
    if (!METRIC_NAME.test(options.name)) throw new Error(`Invalid metric name ${JSON.stringify(options.name)}`);
    const labelNames = options.labelNames ?? [];
    const bad = labelNames.find((l) => !LABEL_NAME.test(l));
    if (bad !== undefined) throw new Error(`Invalid label name ${JSON.stringify(bad)}`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = labelNames;
    this.declared = new Set(labelNames);
    this.sortedLabelNames = [...labelNames].sort();
    this.onCollect = options.collect;
  }

  /** Registers on `options.registers`; called by subclasses once they are built. */
  protected register(options: MetricOptions<T>): void {
    this.reset();
    for (const registry of options.registers ?? []) registry.registerMetric(this);
  }

  collect(): void {
    this.onCollect?.();
  }

  abstract sampleLines(): string[];
  abstract reset(): void;

  /**
   * The series of `labels`, created by `create` the first time. Label sets naming the
   * same values in another key order are one series; the first one's order is written.
   */
  protected seriesOf(labels: Labels, create: (labelText: string) => S): S {
    const key = this.keyOf(labels);
    let found = this.series.get(key);
    if (!found) {
      found = create(formatLabels(labels));
      this.series.set(key, found);
    }
    return found;
  }

  /** The series key of a label set, after checking every label is one of labelNames. */
  protected keyOf(labels: Labels): string {
    for (const name in labels) {
      if (!this.declared.has(name)) {
        throw new Error(`Added label "${name}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`);
      }
    }
    let key = '';
    // Indexed, not for-of: no iterator object per increment.
    const names = this.sortedLabelNames;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const value = labels[name];
      if (value !== undefined) key += `${name}:${value},`;
    }
    return key;
  }
}
