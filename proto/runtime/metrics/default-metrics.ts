import type { MetricRegistrar } from './metric.js';
import { registerNodeMetrics } from './node-metrics.js';
import { registerProcessMetrics } from './process-metrics.js';

/**
 * Registers the process_* and nodejs_* metrics prom-client's collectDefaultMetrics
 * exported (docs/metrics.md), in its order, on `register`. Call it once per registry.
 */
export function collectDefaultMetrics(options: { register: MetricRegistrar }): void {
  registerProcessMetrics(options.register);
  registerNodeMetrics(options.register);
}
