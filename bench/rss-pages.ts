import { spawn } from 'node:child_process';
import { binaryPages, type BinaryPages } from './binary-pages.js';
import { mib } from './proc.js';
import { benchNode, benchNodeFlags } from './processes.js';
import { runBench } from './report.js';

/**
 * `node dist/bench/rss-pages.js <pid>... [--bare]`: the resident pages of each process's
 * program file by component (bench/binary-pages.ts), side by side; `--bare` adds a bare
 * node (the benchmark's node and flags, `-e` with a timer) as the floor. Prints MiB.
 */

async function bareNode(): Promise<{ pid: number; stop(): void }> {
  const child = spawn(
    benchNode().path,
    [...benchNodeFlags(), '-e', 'process.stdout.write("ready\\n"); setTimeout(() => {}, 600000)'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', () => resolve());
  });
  // Past startup: what a bare node keeps resident once idle.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const pids = args.filter((a) => /^\d+$/.test(a)).map(Number);
  const columns: { label: string; pages: BinaryPages }[] = [];
  if (args.includes('--bare')) {
    const bare = await bareNode();
    try {
      columns.push({ label: 'bare node', pages: await binaryPages(bare.pid) });
    } finally {
      bare.stop();
    }
  }
  for (const pid of pids) columns.push({ label: `pid ${pid}`, pages: await binaryPages(pid) });
  if (columns.length === 0) throw new Error('usage: rss-pages.js <pid>... [--bare]');
  const components = [...new Set(columns.flatMap((c) => [...c.pages.byComponent.keys()]))].sort(
    (a, b) =>
      (columns[columns.length - 1]!.pages.byComponent.get(b) ?? 0) -
      (columns[columns.length - 1]!.pages.byComponent.get(a) ?? 0),
  );
  const width = Math.max(...components.map((c) => c.length), 20);
  const row = (name: string, cells: string[]) =>
    `${name.padEnd(width)}  ${cells.map((c) => c.padStart(10)).join('  ')}\n`;
  let out = row(
    'resident MiB of the program file',
    columns.map((c) => c.label),
  );
  for (const c of components)
    out += row(
      c,
      columns.map((col) => mib(col.pages.byComponent.get(c) ?? 0).toFixed(1)),
    );
  out += row(
    'total',
    columns.map((c) => mib(c.pages.totalKiB).toFixed(1)),
  );
  out += `binary: ${[...new Set(columns.map((c) => c.pages.binary))].join(', ')}\n`;
  process.stdout.write(out);
}

runBench('rss-pages', main);
