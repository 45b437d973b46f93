import { Counter, Histogram, Registry } from 'prom-client';

/** Metrics every provider exports on its --health-addr /metrics. */
export class ProviderMetrics {
  private readonly mounts: Counter<'provider' | 'result' | 'error_type'>;
  private readonly duration: Histogram<'provider'>;

  /** Registers on `registry`: the process's (createProcessRegistry); a fresh one keeps them private. */
  constructor(
    private readonly provider: string,
    readonly registry: Registry = new Registry(),
  ) {
    this.mounts = new Counter({
      name: 'provider_mount_total',
      help: 'Mount calls served, by result',
      labelNames: ['provider', 'result', 'error_type'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'provider_mount_duration_seconds',
      help: 'Time to serve a Mount call',
      labelNames: ['provider'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
      registers: [this.registry],
    });
  }

  /** Records one finished Mount call. */
  mountServed(errorType: string | undefined, seconds: number): void {
    this.mounts.inc({ provider: this.provider, result: errorType ? 'error' : 'success', error_type: errorType ?? '' });
    this.duration.observe({ provider: this.provider }, seconds);
  }
}
