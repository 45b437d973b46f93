/**
 * The child process of bench/grpc-transport.ts: one case, one output line.
 *   node grpc-transport-child.js serve:<bare|ours|grpc-js|frames> <socket>   serve ("ready"); the parent calls and measures
 *   node grpc-transport-child.js self:<ours|grpc-js> <socket>         serve and call itself once ("ready")
 *   node grpc-transport-child.js cpu:<client>:<server> <socket> <calls>   JSON: CPU and wall time per call
 *   node grpc-transport-child.js rtt:<ours|frames> <socket> <calls> <paceMs>   JSON: round trips of paced calls to a server child
 */
import { caller, serve, type Stack } from './grpc-stacks.js';
import { percentile } from './stats.js';

/** Child: runs one case and prints one JSON line. */
async function main(kind: string, socket: string, calls: number, paceMs: number): Promise<void> {
  const [what, a, b] = kind.split(':') as [string, Stack | 'bare', Stack | undefined];
  if (what !== 'cpu') setInterval(() => {}, 1 << 30); // alive until the parent has measured (bare node included)
  if (what === 'serve') {
    if (a !== 'bare') await serve(a, socket);
    process.stdout.write('ready\n');
    return; // the parent calls, measures /proc, then kills this process
  }
  if (what === 'self') {
    await serve(a as Stack, socket);
    const c = await caller(a as Stack, socket);
    await c.call();
    process.stdout.write('ready\n');
    return;
  }
  if (what === 'rtt') {
    const c = await caller(a as Stack, socket);
    for (let i = 0; i < 200; i++) await c.call(); // warm-up: connection, JIT
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      await new Promise((resolve) => setTimeout(resolve, paceMs)); // the server idles between calls, as a provider does
      const t0 = process.hrtime.bigint();
      await c.call();
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    c.close();
    times.sort((x, y) => x - y);
    process.stdout.write(`${JSON.stringify({ p50Us: percentile(times, 50), p90Us: percentile(times, 90) })}\n`);
    process.exit(0);
  }
  // cpu:<client>:<server>
  const stop = await serve(b as Stack, socket);
  const c = await caller(a as Stack, socket);
  for (let i = 0; i < 200; i++) await c.call(); // warm-up: connection, JIT
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await c.call();
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  c.close();
  stop();
  process.stdout.write(`${JSON.stringify({ cpuUsPerCall: (cpu.user + cpu.system) / calls, wallUsPerCall: (wallMs * 1000) / calls })}\n`);
  process.exit(0);
}

void main(process.argv[2] as string, process.argv[3] as string, Number(process.argv[4] ?? 0), Number(process.argv[5] ?? 2));
