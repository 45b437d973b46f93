import { Counter, Histogram, Registry, collectDefaultMetrics } from '../../proto/runtime/metrics/index.js';

/** Metrics every provider exports on its --health-addr /metrics. */
export class ProviderMetrics {
  readonly registry = new Registry();
  private readonly mounts: Counter<'provider' | 'result' | 'error_type'>;
  private readonly duration: Histogram<'provider'>;

  constructor(private readonly provider: string, options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.mounts = new Counter({ name: 'provider_mount_total', help: 'Mount calls served, by result', labelNames: ['provider', 'result', 'error_type'], registers: [this.registry] });
    this.duration = new Histogram({ name: 'provider_mount_duration_seconds', help: 'Time to serve a Mount call', labelNames: ['provider'], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10], registers: [this.registry] });
  }

  /** Records one finished Mount call. */
  mountServed(errorType: string | undefined, seconds: number): void {
    this.mounts.inc({ provider: this.provider, result: errorType ? 'error' : 'success', error_type: errorType ?? '' });
    this.duration.observe({ provider: this.provider }, seconds);
  }
}
