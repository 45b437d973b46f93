import { escapeText, PROMETHEUS_CONTENT_TYPE } from './exposition.js';
import type { Collectable, MetricRegistrar } from './metric.js';

/** The metrics one /metrics endpoint serves, in the order they were registered. */
export class Registry implements MetricRegistrar {
  /** The Content-Type of `metrics()`. */
  readonly contentType = PROMETHEUS_CONTENT_TYPE;
  private readonly byName = new Map<string, Collectable>();

  /** Adds a metric; a second, different metric of the same name is refused. */
  registerMetric(metric: Collectable): void {
    const known = this.byName.get(metric.name);
    if (known && known !== metric) throw new Error(`A metric with the name ${metric.name} has already been registered.`);
    this.byName.set(metric.name, metric);
  }

  /** The registered metric named `name`. */
  getSingleMetric(name: string): Collectable | undefined {
    return this.byName.get(name);
  }

  /** Forgets every metric's series. */
  resetMetrics(): void {
    for (const metric of this.byName.values()) metric.reset();
  }

  /**
   * The exposition text: every metric's collect hook first (one hook may set the values
   * of the metrics after it), then per metric its HELP, TYPE and samples, a blank line
   * between metrics.
   */
  metrics(): string {
    const metrics = [...this.byName.values()];
    for (const metric of metrics) metric.collect();
    return `${metrics.map((m) => {
      const name = escapeText(m.name);
      return [`# HELP ${name} ${escapeText(m.help)}`, `# TYPE ${name} ${m.type}`, ...m.sampleLines()].join('\n');
    }).join('\n\n')}\n`;
  }
}
