import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as prom from 'prom-client';
import { collectDefaultMetrics, Registry } from '../../proto/runtime/metrics/index.js';
import { countByName, EVENT_LOOP_SAMPLE_MS, heapSpaceLabel, promClientDelaySeconds } from '../../proto/runtime/metrics/node-metrics.js';
import { parseMaxOpenFiles, parseProcStatus } from '../../proto/runtime/metrics/process-metrics.js';

// The process_* and nodejs_* metrics docs/metrics.md promises, against prom-client 15's
// collectDefaultMetrics in the same process (the oracle; a devDependency).

/** Sample lines with their values blanked, leaving names, label names and label values. */
function shapes(text: string): string[] {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
    // Which handles, resources and GC kinds exist depends on the moment of the scrape.
    .filter((l) => !/^nodejs_active_(resources|handles|requests)\{/.test(l) && !l.startsWith('nodejs_gc_duration_seconds'))
    .map((l) => l.replace(/ \S+$/, ' V'));
}

function sample(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  expect(m, name).to.not.equal(null);
  return Number(m?.[1]);
}

describe('default metrics: the same families as prom-client\'s collectDefaultMetrics', () => {
  const mine = new Registry();
  const theirs = new prom.Registry();
  collectDefaultMetrics({ register: mine });
  prom.collectDefaultMetrics({ register: theirs });

  it('the same HELP and TYPE lines, in the same order', async () => {
    const headers = (text: string) => text.split('\n').filter((l) => l.startsWith('#'));
    expect(headers(mine.metrics())).to.deep.equal(headers(await theirs.metrics()));
  });

  it('the same series (names, labels and label values; not the values, which move)', async () => {
    // Scraped twice: the event loop lag is written at the scrape after the one that measured it.
    mine.metrics();
    await theirs.metrics();
    expect(shapes(mine.metrics())).to.deep.equal(shapes(await theirs.metrics()));
  });

  it('the same values where they do not move', async () => {
    const [a, b] = [mine.metrics(), await theirs.metrics()];
    for (const line of ['process_max_fds', 'nodejs_version_info{']) {
      expect(a.split('\n').find((l) => l.startsWith(line)), line).to.equal(b.split('\n').find((l) => l.startsWith(line)));
    }
    expect(sample(a, 'process_start_time_seconds')).to.be.closeTo(sample(b, 'process_start_time_seconds'), 1);
  });

  it('values that are what they say', () => {
    const text = mine.metrics();
    const rss = process.memoryUsage.rss();
    expect(sample(text, 'process_resident_memory_bytes')).to.be.within(rss / 2, rss * 2);
    expect(sample(text, 'process_open_fds')).to.be.greaterThan(2);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).to.be.greaterThan(1e6);
    expect(sample(text, 'process_cpu_seconds_total')).to.be.closeTo(sample(text, 'process_cpu_user_seconds_total') + sample(text, 'process_cpu_system_seconds_total'), 1e-9);
    expect(text).to.match(/^nodejs_heap_space_size_used_bytes\{space="old"\} \d+$/m);
    expect(text).to.match(/^nodejs_active_resources_total \d+$/m);
  });

  it('every GC counted, a batch of them included, with its kind', async () => {
    const count = () => [...mine.metrics().matchAll(/^nodejs_gc_duration_seconds_count\{kind="(major|minor|incremental|weakcb)"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[2]), 0);
    const before = count();
    // Node hands an observer the GCs of one synchronous stretch in one call; ours was
    // registered first, so it has seen every entry this one sees by the time this one runs.
    let seen = 0;
    let largestBatch = 0;
    const observer = new PerformanceObserver((list) => { seen += list.getEntries().length; largestBatch = Math.max(largestBatch, list.getEntries().length); });
    observer.observe({ entryTypes: ['gc'] });
    // One synchronous stretch of allocation per round, then its GCs' delivery. Node 24's
    // young generation grows with the machine's memory, so a round may hold only one GC:
    // go on until one delivery carried several (bounded).
    const delivery = () => new Promise<void>((resolve) => {
      const last = new PerformanceObserver(() => { last.disconnect(); resolve(); });
      last.observe({ entryTypes: ['gc'] });
    });
    for (let round = 0; round < 20 && largestBatch < 2; round++) {
      const delivered = delivery();
      let keep: unknown[] = [];
      for (let r = 0; r < 3 + round; r++) {
        for (let i = 0; i < 300_000; i++) keep.push({ i, s: `x${i}` });
        keep = [];
      }
      await delivered;
    }
    observer.disconnect();
    expect(seen, 'GCs seen').to.be.greaterThan(1);
    expect(largestBatch, 'GCs delivered in one call').to.be.greaterThan(1);
    expect(count() - before).to.equal(seen);
  });
});

const METRICS_CHILD = fileURLToPath(new URL('../support/event-loop-metrics-child.js', import.meta.url));

/** Runs test/support/event-loop-metrics-child.ts in `mode` for `windowMs`: its main thread's sleeps and a scrape. */
async function metricsChild(mode: 'idle' | 'busy', windowMs: number): Promise<{ wakeups: number; metrics: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [METRICS_CHILD, mode, String(windowMs)]);
  return JSON.parse(stdout) as { wakeups: number; metrics: string };
}

describe('default metrics: the event loop delay', () => {
  it('wakes an idle process about 10 times a second, not prom-client\'s 100, and reads a 10 ms timer\'s delay', async function () {
    this.timeout(10_000);
    const { wakeups, metrics } = await metricsChild('idle', 1000);
    // One wakeup per sample (EVENT_LOOP_SAMPLE_MS) and the child's own timer, with room for
    // a GC task; prom-client's 10 ms sampling made ~100.
    expect(EVENT_LOOP_SAMPLE_MS).to.be.at.least(100);
    expect(wakeups, 'main-thread sleeps in 1 s').to.be.at.most(30);
    // Values on prom-client's scale: the interval of a 10 ms timer, not of a 100 ms one.
    expect(sample(metrics, 'nodejs_eventloop_lag_min_seconds')).to.be.within(0.005, 0.05);
    expect(sample(metrics, 'nodejs_eventloop_lag_p50_seconds')).to.be.within(0.005, 0.05);
  });

  it('reads a loop kept busy by short blocks as busy (50 ms blocks every 7 ms)', async function () {
    this.timeout(10_000);
    const { metrics } = await metricsChild('busy', 1500);
    // The sampling timer waits out part of a block each time (here ~15 ms: it falls into the
    // blocks at the same phase); an idle loop reads ~0.0101 s. A machine busy with other
    // work only makes the blocks longer.
    expect(sample(metrics, 'nodejs_eventloop_lag_min_seconds')).to.be.at.least(0.005);
    expect(sample(metrics, 'nodejs_eventloop_lag_p50_seconds')).to.be.at.least(0.015);
    expect(sample(metrics, 'nodejs_eventloop_lag_max_seconds')).to.be.at.least(0.015);
  });

  it('reads a sample\'s interval as prom-client\'s 10 ms timer would have (the same lateness)', () => {
    expect(promClientDelaySeconds(100_250_000, 7, 100)).to.be.closeTo(0.01025, 1e-12);
    expect(promClientDelaySeconds(160_000_000, 1, 100)).to.be.closeTo(0.07, 1e-12);
    // An empty histogram's values pass as they are, as prom-client writes them.
    expect(promClientDelaySeconds(0, 0, 100)).to.equal(0);
    expect(promClientDelaySeconds(9223372036854776000, 0, 100)).to.equal(9223372036854776000 / 1e9);
  });
});

describe('default metrics: reading /proc and V8', () => {
  it('parses /proc/self/status in bytes', () => {
    const status = 'Name:\tnode\nVmPeak:\t  999 kB\nVmSize:\t 1000 kB\nVmRSS:\t   20 kB\nVmData:\t  300 kB\nVmStk:\t 1 kB\n';
    expect(parseProcStatus(status)).to.deep.equal({ VmSize: 1024000, VmRSS: 20480, VmData: 307200 });
    expect(parseProcStatus('Name:\tnode\n')).to.deep.equal({});
  });

  it('parses the soft limit of open files', () => {
    const limits = 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            20000                1048576              files     \n';
    expect(parseMaxOpenFiles(limits)).to.equal(20000);
    expect(parseMaxOpenFiles('Max cpu time              unlimited            unlimited            seconds\n')).to.equal(undefined);
  });

  for (const [space, label] of [['new_space', 'new'], ['code_large_object_space', 'code_large_object'], ['read_only_space', 'read_only']] as const) {
    it(`labels V8's ${space} as ${label}`, () => expect(heapSpaceLabel(space)).to.equal(label));
  }

  it('counts names in first-seen order', () => {
    expect([...countByName(['TCPWrap', 'Timeout', 'TCPWrap'])]).to.deep.equal([['TCPWrap', 2], ['Timeout', 1]]);
  });
});
