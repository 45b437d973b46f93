// An idle process with the default metrics registered, for default-metrics.test.ts: it
// counts its main thread's sleeps (voluntary context switches, /proc/self/status) over
// `argv[2]` ms of doing nothing, then prints them and a scrape as JSON and exits.
import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from '../../proto/runtime/metrics/index.js';

const windowMs = Number(process.argv[2]);
const sleeps = (): number => Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const registry = new Registry();
collectDefaultMetrics({ register: registry });
// Let start-up settle before counting.
setTimeout(() => {
  const before = sleeps();
  setTimeout(() => {
    const wakeups = sleeps() - before;
    process.stdout.write(JSON.stringify({ wakeups, metrics: registry.metrics() }));
  }, windowMs);
}, 200);
