import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Histogram } from 'prom-client';
import { createProcessRegistry, EVENT_LOOP_SAMPLE_MS } from '../../../lib/process-registry.js';

// The process_* and nodejs_* metrics every process serves (docs/metrics.md): prom-client's
// default metrics on the process's registry, as dashboards read them.

/** Name, type and HELP of each default metric, in the order /metrics lists them. */
const DEFAULT_METRICS: readonly (readonly [string, 'counter' | 'gauge' | 'histogram', string])[] = [
  ['process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.'],
  ['process_cpu_system_seconds_total', 'counter', 'Total system CPU time spent in seconds.'],
  ['process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.'],
  ['process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.'],
  ['process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.'],
  ['process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.'],
  ['process_heap_bytes', 'gauge', 'Process heap size in bytes.'],
  ['process_open_fds', 'gauge', 'Number of open file descriptors.'],
  ['process_max_fds', 'gauge', 'Maximum number of open file descriptors.'],
  ['nodejs_eventloop_lag_seconds', 'gauge', 'Lag of event loop in seconds.'],
  ['nodejs_eventloop_lag_min_seconds', 'gauge', 'The minimum recorded event loop delay.'],
  ['nodejs_eventloop_lag_max_seconds', 'gauge', 'The maximum recorded event loop delay.'],
  ['nodejs_eventloop_lag_mean_seconds', 'gauge', 'The mean of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_stddev_seconds', 'gauge', 'The standard deviation of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p50_seconds', 'gauge', 'The 50th percentile of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p90_seconds', 'gauge', 'The 90th percentile of the recorded event loop delays.'],
  ['nodejs_eventloop_lag_p99_seconds', 'gauge', 'The 99th percentile of the recorded event loop delays.'],
  [
    'nodejs_active_resources',
    'gauge',
    'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
  ],
  ['nodejs_active_resources_total', 'gauge', 'Total number of active resources.'],
  [
    'nodejs_active_handles',
    'gauge',
    'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
  ],
  ['nodejs_active_handles_total', 'gauge', 'Total number of active handles.'],
  [
    'nodejs_active_requests',
    'gauge',
    'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
  ],
  ['nodejs_active_requests_total', 'gauge', 'Total number of active requests.'],
  ['nodejs_heap_size_total_bytes', 'gauge', 'Process heap size from Node.js in bytes.'],
  ['nodejs_heap_size_used_bytes', 'gauge', 'Process heap size used from Node.js in bytes.'],
  ['nodejs_external_memory_bytes', 'gauge', 'Node.js external memory size in bytes.'],
  ['nodejs_heap_space_size_total_bytes', 'gauge', 'Process heap space size total from Node.js in bytes.'],
  ['nodejs_heap_space_size_used_bytes', 'gauge', 'Process heap space size used from Node.js in bytes.'],
  ['nodejs_heap_space_size_available_bytes', 'gauge', 'Process heap space size available from Node.js in bytes.'],
  ['nodejs_version_info', 'gauge', 'Node.js version info.'],
  [
    'nodejs_gc_duration_seconds',
    'histogram',
    'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
  ],
];

function sample(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  expect(m, name).to.not.equal(null);
  return Number(m?.[1]);
}

describe('default metrics: the process registry', () => {
  const registry = createProcessRegistry();

  it('has every default metric with its HELP and TYPE, in order, and nothing else', async () => {
    const headers = (await registry.metrics()).split('\n').filter((l) => l.startsWith('#'));
    const want = DEFAULT_METRICS.flatMap(([name, type, help]) => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`]);
    expect(headers).to.deep.equal(want);
  });

  it('values that are what they say', async () => {
    const text = await registry.metrics();
    const rss = process.memoryUsage.rss();
    expect(sample(text, 'process_resident_memory_bytes')).to.be.within(rss / 2, rss * 2);
    expect(sample(text, 'process_open_fds')).to.be.greaterThan(2);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).to.be.greaterThan(1e6);
    expect(sample(text, 'process_start_time_seconds')).to.be.closeTo(Date.now() / 1000 - process.uptime(), 2);
    const cpu = (kind: string): number => sample(text, `process_cpu${kind}_seconds_total`);
    expect(cpu('')).to.be.closeTo(cpu('_user') + cpu('_system'), 1e-6);
    expect(text).to.match(/^nodejs_heap_space_size_used_bytes\{space="old"\} \d+$/m);
    expect(text).to.match(/^nodejs_active_resources_total \d+$/m);
    const [major, minor, patch] = process.versions.node.split('.');
    const labels = `version="${process.version}",major="${major}",minor="${minor}",patch="${patch}"`;
    expect(text).to.include(`nodejs_version_info{${labels}} 1`);
  });

  it('the GC histogram: label kind and buckets 0.001, 0.01, 0.1, 1, 2, 5', async () => {
    const gc = registry.getSingleMetric('nodejs_gc_duration_seconds');
    expect(gc).to.be.instanceOf(Histogram);
    // A kind that has not been seen yet, so that its buckets are written whatever GCs ran.
    (gc as Histogram<'kind'>).zero({ kind: 'weakcb' });
    const text = await registry.metrics();
    const bucket = /^nodejs_gc_duration_seconds_bucket\{le="([^"]+)",kind="weakcb"\}/gm;
    const les = [...text.matchAll(bucket)].map((m) => m[1]);
    expect(les).to.deep.equal(['0.001', '0.01', '0.1', '1', '2', '5', '+Inf']);
  });

  it('counts garbage collections by kind', async function () {
    this.timeout(10_000);
    const counts = /^nodejs_gc_duration_seconds_count\{kind="(major|minor|incremental)"\} (\d+)$/gm;
    const count = async () => [...(await registry.metrics()).matchAll(counts)].reduce((n, m) => n + Number(m[2]), 0);
    const before = await count();
    for (let round = 0; round < 20 && (await count()) === before; round++) {
      const keep: unknown[] = [];
      for (let i = 0; i < 300_000; i++) keep.push({ i, s: `x${i}` });
      keep.length = 0;
      // GC entries reach observers in a later task.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await count()).to.be.greaterThan(before);
  });
});

const METRICS_CHILD = fileURLToPath(new URL('../../support/event-loop-metrics-child.js', import.meta.url));

/** Runs test/support/event-loop-metrics-child.ts in `mode` for `windowMs`: its main thread's sleeps and a scrape. */
async function metricsChild(mode: 'idle' | 'busy', windowMs: number): Promise<{ wakeups: number; metrics: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [METRICS_CHILD, mode, String(windowMs)]);
  return JSON.parse(stdout) as { wakeups: number; metrics: string };
}

describe('default metrics: the event loop delay', () => {
  it("wakes an idle process ~10 times a second, not 100 (prom-client's default); reads ~0.100 s", async function () {
    this.timeout(10_000);
    const { wakeups, metrics } = await metricsChild('idle', 1000);
    // One wakeup per sample and the child's own timer, with room for a GC task; a
    // 10 ms precision makes ~100.
    expect(EVENT_LOOP_SAMPLE_MS).to.equal(100);
    expect(wakeups, 'main-thread sleeps in 1 s').to.be.at.most(30);
    // The values are the sampling timer's intervals: 100 ms and how late it fired.
    expect(sample(metrics, 'nodejs_eventloop_lag_min_seconds')).to.be.within(0.099, 0.105);
    expect(sample(metrics, 'nodejs_eventloop_lag_p50_seconds')).to.be.within(0.099, 0.105);
  });

  it('reads a loop kept busy by short blocks as busy (50 ms blocks every 7 ms)', async function () {
    this.timeout(10_000);
    const { metrics } = await metricsChild('busy', 1500);
    // The sampling timer waits out part of a block each time (~15 ms: it falls into the
    // blocks at the same phase), so ~0.115 s; an idle loop reads ~0.1003 s. A machine busy with other
    // work only makes the blocks longer.
    expect(sample(metrics, 'nodejs_eventloop_lag_p50_seconds')).to.be.at.least(0.108);
    expect(sample(metrics, 'nodejs_eventloop_lag_max_seconds')).to.be.at.least(0.11);
  });
});
