/**
 * proto/grpc (node:http2) against @grpc/grpc-js, the transport it replaces (issue 15):
 * resident memory of a process serving one call, the round trip of a call between two
 * processes (also against fixed frames on a raw socket, the floor of an HTTP/2 framing of
 * our own), and CPU per small unary call, each in fresh processes (grpc-transport-child.ts) on the images' Node and flags, over a Unix
 * socket in a temp dir. Results are printed; nothing is written.
 *   node dist/bench/grpc-transport.js [--runs N] [--calls N] [--pace MS] [--node PATH]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { caller, type Stack } from './grpc-stacks.js';
import { NODE_FLAGS } from '../proto/runtime/node-flags.js';
import { mib, processMemory } from './proc.js';
import { median, numberOption } from './stats.js';

const IMAGE_NODE = join(process.env['HOME'] ?? '/root', '.cache/secrets-store-csi/peers/node-v24.21.0-linux-x64/bin/node');
/** Starts a child for `kind`; resolves with its first output line and the process. */
function start(node: string, kind: string, socket: string, calls: number, paceMs = 0): Promise<{ line: string; pid: number; kill(): void }> {
  const script = fileURLToPath(new URL('./grpc-transport-child.js', import.meta.url));
  const proc = spawn(node, [...NODE_FLAGS, script, kind, socket, String(calls), String(paceMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ line: out.slice(0, nl), pid: proc.pid as number, kill: () => proc.kill('SIGKILL') });
    });
    proc.once('exit', (code) => reject(new Error(`${kind} exited with ${code} before answering`)));
  });
}

let sockets = 0;

async function rssOf(node: string, kind: string, dir: string, callFrom?: Stack): Promise<number> {
  const socket = join(dir, `${sockets++}.sock`);
  const c = await start(node, kind, socket, 0);
  try {
    if (callFrom) {
      const client = await caller(callFrom, socket);
      await client.call();
      client.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the answer's garbage settle
    return (await processMemory(c.pid)).rssKiB;
  } finally {
    c.kill();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = numberOption(args, '--runs', 5, 1);
  const calls = numberOption(args, '--calls', 1000, 1);
  const paceMs = numberOption(args, '--pace', 2, 0);
  const nodeAt = args.indexOf('--node');
  const node = nodeAt >= 0 && args[nodeAt + 1] !== undefined ? args[nodeAt + 1] as string : existsSync(IMAGE_NODE) ? IMAGE_NODE : process.execPath;
  const dir = await mkdtemp(join(tmpdir(), 'ssc-grpc-bench-'));
  try {
    process.stdout.write(`node ${node} ${NODE_FLAGS.join(' ')}; ${runs} runs each, medians\n\nRSS (MiB)\n`);
    const rssCases: [string, string, Stack | undefined][] = [
      ['bare node (no gRPC loaded)', 'serve:bare', undefined],
      ['server, one call from outside: ours', 'serve:ours', 'ours'],
      ['server, one call from outside: grpc-js', 'serve:grpc-js', 'ours'],
      ['server + client, one call to itself: ours', 'self:ours', undefined],
      ['server + client, one call to itself: grpc-js', 'self:grpc-js', undefined],
    ];
    for (const [label, kind, from] of rssCases) {
      const values: number[] = [];
      for (let i = 0; i < runs; i++) values.push(await rssOf(node, kind, dir, from));
      process.stdout.write(`  ${label.padEnd(48)} ${mib(median(values)).toFixed(1)}  (${values.map((v) => mib(v).toFixed(1)).join(' ')})\n`);
    }
    process.stdout.write(`\nRound trip of a small unary call from another process, ${calls} calls ${paceMs} ms apart after 200 warm-up (µs);\n` +
      `"frames" is fixed HTTP/2 frames on a raw socket (h2-frames.ts), the floor of any framing of our own\n`);
    const pairs: [Stack, Stack][] = [['ours', 'ours'], ['frames', 'ours'], ['ours', 'frames'], ['frames', 'frames']];
    const rtt = pairs.map(() => ({ p50: [] as number[], p90: [] as number[] }));
    const order = pairs.map((_, at) => at);
    for (let i = 0; i < runs; i++) {
      for (const at of i % 2 === 0 ? order : [...order].reverse()) { // interleaved, so machine noise hits every pair
        const [clientStack, serverStack] = pairs[at] as [Stack, Stack];
        const socket = join(dir, `${sockets++}.sock`);
        const server = await start(node, `serve:${serverStack}`, socket, 0);
        try {
          const c = await start(node, `rtt:${clientStack}`, socket, calls, paceMs);
          const r = JSON.parse(c.line) as { p50Us: number; p90Us: number };
          rtt[at]?.p50.push(r.p50Us);
          rtt[at]?.p90.push(r.p90Us);
        } finally {
          server.kill();
        }
      }
    }
    for (const [at, [clientStack, serverStack]] of pairs.entries()) {
      const row = rtt[at] as { p50: number[]; p90: number[] };
      process.stdout.write(`  client ${clientStack.padEnd(8)} server ${serverStack.padEnd(8)} p50 ${median(row.p50).toFixed(0).padStart(4)}  p90 ${median(row.p90).toFixed(0).padStart(4)}  (p50 ${row.p50.map((v) => v.toFixed(0)).join(' ')})\n`);
    }
    process.stdout.write(`\nCPU per call, ${calls} sequential small unary calls after 200 warm-up, client and server in one process (µs)\n`);
    for (const [clientStack, serverStack] of [['ours', 'ours'], ['grpc-js', 'grpc-js'], ['grpc-js', 'ours'], ['ours', 'grpc-js']] as [Stack, Stack][]) {
      const cpu: number[] = [];
      const wall: number[] = [];
      for (let i = 0; i < runs; i++) {
        const c = await start(node, `cpu:${clientStack}:${serverStack}`, join(dir, `${sockets++}.sock`), calls);
        const r = JSON.parse(c.line) as { cpuUsPerCall: number; wallUsPerCall: number };
        cpu.push(r.cpuUsPerCall);
        wall.push(r.wallUsPerCall);
      }
      process.stdout.write(`  client ${clientStack.padEnd(8)} server ${serverStack.padEnd(8)} CPU ${median(cpu).toFixed(0).padStart(4)}  wall ${median(wall).toFixed(0).padStart(4)}  (CPU ${cpu.map((v) => v.toFixed(0)).join(' ')})\n`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`grpc-transport bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
