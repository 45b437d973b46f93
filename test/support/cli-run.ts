import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { CLI_PATH } from '../../bin/child-process.js';
import { NODE_FLAGS } from '../../lib/node-flags.js';

/** A `secrets-store-csi <args>` process whose output a test reads as it comes. */
export interface CliRun {
  readonly process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Exit code, or the signal's name when a signal ended it. */
  readonly exited: Promise<number | string>;
  /** Resolves once stdout (or stderr) so far matches `pattern`; rejects if the process exits first. */
  until(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<void>;
}

/**
 * Starts our CLI (with the images' NODE_FLAGS) as a child; `options` go to spawn (uid,
 * detached, cwd, env); `node` and `cli` replace this node binary and dist/bin/cli.js.
 */
export function spawnCli(
  args: readonly string[],
  options: SpawnOptions & { node?: string; cli?: string } = {},
): CliRun {
  const { node = process.execPath, cli = CLI_PATH, ...spawnOptions } = options;
  const child = spawn(node, [...NODE_FLAGS, cli, ...args], { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
  const text = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d: Buffer) => {
    text.stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    text.stderr += d.toString();
  });
  const exited = new Promise<number | string>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return {
    process: child,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    exited,
    async until(stream, pattern) {
      while (!pattern.test(text[stream])) {
        const more = new Promise<boolean>((resolve) => child[stream]?.once('data', () => resolve(true)));
        if (!(await Promise.race([more, exited.then(() => false)])) && !pattern.test(text[stream])) {
          throw new Error(`exited before ${stream} matched ${pattern}:\n${text.stdout}\n${text.stderr}`);
        }
      }
    },
  };
}

/** Runs our CLI to the end: exit code (or signal name), stdout and stderr. */
export async function runCli(
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const run = spawnCli(args, options);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** Pids of processes whose command line mentions `text` (the demo's children name its temp dir). */
export async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) pids.push(Number(name));
  }
  return pids;
}
