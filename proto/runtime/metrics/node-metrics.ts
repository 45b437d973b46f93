// The nodejs_* half of the default metrics, as prom-client 15's collectDefaultMetrics
// exported them (names, HELP, types, labels and buckets), without loading prom-client.
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Gauge } from './gauge.js';
import { Histogram } from './histogram.js';
import type { MetricRegistrar } from './metric.js';

/** Node's names for GC kinds (perf_hooks constants), as the `kind` label writes them. */
const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Counts of equal strings, in first-seen order. */
export function countByName(names: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** The heap space label: V8's space name up to "_space" (new_space → new). */
export function heapSpaceLabel(spaceName: string): string {
  return spaceName.substring(0, spaceName.indexOf('_space'));
}

/**
 * How often the event loop delay is sampled. prom-client samples every 10 ms: a timer that
 * wakes an idle process 100 times a second, ~4 ms of CPU per second on this machine (an
 * idle Go driver: 0.3–0.5 ms). Every 100 ms costs a tenth of that. Node's own histogram
 * (a native timer): a JavaScript timer that records its own lateness cost twice as much
 * per wakeup (measured: 1.9 against 1.0 ms/s) and read the same under load.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** prom-client's resolution: its delay values are the intervals of a 10 ms timer, so ~0.010 s when nothing blocks. */
const PROM_CLIENT_RESOLUTION_MS = 10;

/**
 * A delay value of the histogram (the interval of a `sampleMs` timer, ns) as prom-client's
 * 10 ms timer would have read it (s): the lateness is the same, the interval 10 ms. The
 * values of an empty histogram (no sample since the last scrape) are passed as they are,
 * as prom-client does.
 */
export function promClientDelaySeconds(intervalNs: number, samples: number, sampleMs = EVENT_LOOP_SAMPLE_MS): number {
  if (samples === 0) return intervalNs / 1e9;
  return (intervalNs - (sampleMs - PROM_CLIENT_RESOLUTION_MS) * 1e6) / 1e9;
}

function registerEventLoopLag(registers: readonly MetricRegistrar[]): void {
  // Node's delay histogram, one sample every EVENT_LOOP_SAMPLE_MS; each scrape reads and resets it.
  const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
  delay.enable();
  const gauge = (name: string, help: string) => new Gauge({ name: `nodejs_eventloop_lag_${name}_seconds`, help, registers });
  const lag: Gauge = new Gauge({
    name: 'nodejs_eventloop_lag_seconds', help: 'Lag of event loop in seconds.', registers,
    collect: () => {
      // How long a callback queued now waits: written at the next scrape.
      const start = process.hrtime.bigint();
      setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
      const n = delay.count;
      min.set(promClientDelaySeconds(delay.min, n));
      max.set(promClientDelaySeconds(delay.max, n));
      mean.set(promClientDelaySeconds(delay.mean, n));
      stddev.set(delay.stddev / 1e9);
      p50.set(promClientDelaySeconds(delay.percentile(50), n));
      p90.set(promClientDelaySeconds(delay.percentile(90), n));
      p99.set(promClientDelaySeconds(delay.percentile(99), n));
      delay.reset();
    },
  });
  const min = gauge('min', 'The minimum recorded event loop delay.');
  const max = gauge('max', 'The maximum recorded event loop delay.');
  const mean = gauge('mean', 'The mean of the recorded event loop delays.');
  const stddev = gauge('stddev', 'The standard deviation of the recorded event loop delays.');
  const p50 = gauge('p50', 'The 50th percentile of the recorded event loop delays.');
  const p90 = gauge('p90', 'The 90th percentile of the recorded event loop delays.');
  const p99 = gauge('p99', 'The 99th percentile of the recorded event loop delays.');
}

/** A `{type}` gauge of counts and its `_total`, read from `list` at each scrape. */
function registerActive(registers: readonly MetricRegistrar[], name: string, help: string, totalHelp: string, list: () => string[]): void {
  const byType: Gauge<'type'> = new Gauge({
    name, help, labelNames: ['type'], registers,
    collect: () => {
      byType.reset();
      for (const [type, count] of countByName(list())) byType.set({ type }, count);
    },
  });
  const total: Gauge = new Gauge({ name: `${name}_total`, help: totalHelp, registers, collect: () => total.set(list().length) });
}

/** Class names of the objects Node's deprecated-but-present _getActiveHandles/_getActiveRequests list. */
function classNames(read: (() => unknown[]) | undefined): () => string[] {
  return () => (read?.() ?? []).flatMap((o) => {
    const ctor = (o as { constructor?: { name: string } } | null)?.constructor;
    return o && ctor !== undefined ? [ctor.name] : [];
  });
}

function registerHeap(registers: readonly MetricRegistrar[]): void {
  const total: Gauge = new Gauge({
    name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.', registers,
    collect: () => {
      let usage: NodeJS.MemoryUsage;
      try {
        usage = process.memoryUsage();
      } catch {
        return;
      }
      total.set(usage.heapTotal);
      used.set(usage.heapUsed);
      external.set(usage.external);
    },
  });
  const used = new Gauge({ name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', registers });
  const external = new Gauge({ name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', registers });
  const space = (kind: string, collect?: () => void) => new Gauge<'space'>({
    name: `nodejs_heap_space_size_${kind}_bytes`, help: `Process heap space size ${kind} from Node.js in bytes.`, labelNames: ['space'], registers, ...(collect ? { collect } : {}),
  });
  const spaceTotal: Gauge<'space'> = space('total', () => {
    for (const s of getHeapSpaceStatistics()) {
      const labels = { space: heapSpaceLabel(s.space_name) };
      spaceTotal.set(labels, s.space_size);
      spaceUsed.set(labels, s.space_used_size);
      spaceAvailable.set(labels, s.space_available_size);
    }
  });
  const spaceUsed = space('used');
  const spaceAvailable = space('available');
}

function registerGc(registers: readonly MetricRegistrar[]): void {
  const gc = new Histogram<'kind'>({
    name: 'nodejs_gc_duration_seconds', help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'], buckets: [0.001, 0.01, 0.1, 1, 2, 5], registers,
  });
  // Every entry of a batch (prom-client observed only the first one of each callback).
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1];
      gc.observe({ kind: kind ?? 'undefined' }, entry.duration / 1000);
    }
  }).observe({ entryTypes: ['gc'] });
}

/** Event loop lag, active resources/handles/requests, heap and heap spaces, version, GC durations. */
export function registerNodeMetrics(registry: MetricRegistrar): void {
  const registers = [registry];
  registerEventLoopLag(registers);
  const internals = process as unknown as { _getActiveHandles?: () => unknown[]; _getActiveRequests?: () => unknown[] };
  registerActive(registers, 'nodejs_active_resources', 'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    'Total number of active resources.', () => process.getActiveResourcesInfo());
  if (internals._getActiveHandles) {
    registerActive(registers, 'nodejs_active_handles', 'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
      'Total number of active handles.', classNames(() => internals._getActiveHandles?.() ?? []));
  }
  if (internals._getActiveRequests) {
    registerActive(registers, 'nodejs_active_requests', 'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
      'Total number of active requests.', classNames(() => internals._getActiveRequests?.() ?? []));
  }
  registerHeap(registers);
  const [major, minor, patch] = process.version.slice(1).split('.').map(Number);
  const version: Gauge<'version' | 'major' | 'minor' | 'patch'> = new Gauge({
    name: 'nodejs_version_info', help: 'Node.js version info.', labelNames: ['version', 'major', 'minor', 'patch'], registers,
    collect: () => version.set({ version: process.version, major: major ?? 0, minor: minor ?? 0, patch: patch ?? 0 }, 1),
  });
  registerGc(registers);
}
