// A small Prometheus registry (issue 15: prom-client cost ~9 MiB of each process's RSS):
// counters, gauges, histograms and the default process/Node.js metrics, written in the
// text format prom-client wrote.
export { Counter } from './counter.js';
export { Gauge } from './gauge.js';
export { Histogram } from './histogram.js';
export { Registry } from './registry.js';
export { collectDefaultMetrics } from './default-metrics.js';
export { PROMETHEUS_CONTENT_TYPE } from './exposition.js';
export type { LabelValues } from './metric.js';
