// The Prometheus registry a process serves on /metrics: prom-client's, with its default
// process_* and nodejs_* metrics. A process makes one in its wiring (driver/main.ts,
// providers/framework/run-provider.ts) and hands it to whatever registers metrics.
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * How often the event loop delay is sampled (prom-client's eventLoopMonitoringPrecision).
 * Its default, 10 ms, wakes an idle process 100 times a second, about ten times the idle
 * CPU of sampling every 100 ms (measured in docs/metrics.md). The
 * nodejs_eventloop_lag_{min,max,mean,p50,p90,p99}_seconds values are this timer's
 * intervals, so ~0.100 s when nothing blocks (docs/metrics.md).
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** A new registry with prom-client's default metrics on it, the event loop sampled every EVENT_LOOP_SAMPLE_MS. */
export function createProcessRegistry(): Registry {
  const register = new Registry();
  collectDefaultMetrics({ register, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return register;
}
