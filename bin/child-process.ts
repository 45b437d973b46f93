import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../lib/node-flags.js';

/** The compiled CLI entry, for starting our own processes. */
export const CLI_PATH = fileURLToPath(new URL('./cli.js', import.meta.url));

/** How much of a child's stderr is kept (its tail). */
const STDERR_TAIL_BYTES = 256 * 1024;

/** A child process started by `startProcess`. */
export interface Child {
  readonly process: ChildProcess;
  /** The last 256 KiB it wrote to stderr (our processes log JSON there). */
  stderr(): string;
  /** Sends SIGTERM and waits for exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
}

/** Options of startProcess and startCli. */
export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Aborting before `ready` stops the child (SIGTERM, SIGKILL after 5 s); the promise rejects once it exited. */
  signal?: AbortSignal;
}

/**
 * Starts a process and resolves once a stderr line matches `ready` — an event, not a
 * sleep. Rejects with the output so far if it exits first or `timeoutMs` passes.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  ready: RegExp,
  options: StartOptions = {},
): Promise<Child> {
  if (options.signal?.aborted) return Promise.reject(new Error(`${command} not started: aborted`));
  const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const handle: Child = {
    process: child,
    stderr: () => err,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} not ready after ${options.timeoutMs ?? 30_000}ms:\n${err}${out}`));
    }, options.timeoutMs ?? 30_000);
    let isReady = false;
    child.stderr?.on('data', (d: Buffer) => {
      // Keep a bounded tail: long-lived children log for hours (benchmarks, tests).
      err = (err + d.toString()).slice(-STDERR_TAIL_BYTES);
      if (!isReady && ready.test(err)) {
        isReady = true;
        clearTimeout(timer);
        resolve(handle);
      }
    });
    // A caller stopped while we wait (the demo on Ctrl-C): the child must not outlive it.
    const onAbort = () => {
      if (isReady) return;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('exit', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${err}${out}`));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** Starts `secrets-store-csi <args>` (our CLI, with the images' NODE_FLAGS) and waits for `ready` on stderr. */
export function startCli(args: readonly string[], ready: RegExp, options: StartOptions = {}): Promise<Child> {
  return startProcess(process.execPath, [...NODE_FLAGS, CLI_PATH, ...args], ready, options);
}

/** How many times `pattern` occurs in the child's stderr tail so far. */
export function countLogged(child: Child, pattern: RegExp): number {
  return (child.stderr().match(new RegExp(pattern.source, 'g')) ?? []).length;
}

/** Resolves once the child has logged `pattern` at least `count` times (an event, not a timer). */
export async function untilLogged(child: Child, pattern: RegExp, count = 1): Promise<void> {
  while (countLogged(child, pattern) < count) {
    if (child.process.exitCode !== null || child.process.signalCode !== null)
      throw new Error(`process exited before logging ${pattern}`);
    await new Promise<void>((resolve) => child.process.stderr?.once('data', () => resolve()));
  }
}
