// A process with the process registry's default metrics, for default-metrics.test.ts. With
// `idle` it does nothing for `argv[3]` ms and counts its main thread's sleeps (voluntary
// context switches, /proc/self/status); with `busy` it blocks its event loop for 50 ms
// every 7 ms for that long. Then it prints the sleeps and a scrape as JSON and exits.
import { readFileSync } from 'node:fs';
import { createProcessRegistry } from '../../lib/process-registry.js';

const mode = process.argv[2];
const windowMs = Number(process.argv[3]);
const sleeps = (): number =>
  Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const registry = createProcessRegistry();
// Let start-up settle, and start the window with an empty histogram (a scrape resets it).
setTimeout(() => {
  void registry.metrics().then(() => {
    const before = sleeps();
    const end = performance.now() + windowMs;
    if (mode === 'busy') {
      const block = (): void => {
        const until = performance.now() + 50;
        while (performance.now() < until) {
          /* the event loop is blocked */
        }
        if (performance.now() < end) setTimeout(block, 7);
      };
      setTimeout(block, 7);
    }
    setTimeout(() => {
      const wakeups = sleeps() - before;
      void registry.metrics().then((metrics) => process.stdout.write(JSON.stringify({ wakeups, metrics })));
    }, windowMs);
  });
}, 200);
