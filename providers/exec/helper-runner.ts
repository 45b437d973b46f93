// Runs one helper process: the I/O edge of the exec provider. execve(2) of the resolved
// file with an argv (never a shell), a clean environment, stdin on /dev/null, a fresh
// empty working directory removed afterwards, in its own process group so that a
// timeout, an output flood or a cancelled Mount kills everything it forked: SIGTERM to
// the group, SIGKILL one second later. When the helper itself exits, the group is killed
// at once: a child it left behind must not hold stdout open (or run on) after it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelperLifecycle } from './orphan-reaper.js';

/** Bytes of stderr kept: its first line is all that is ever shown. */
export const STDERR_KEPT_BYTES = 16 * 1024;
/** How long a helper has to end after SIGTERM before the group gets SIGKILL. */
export const KILL_GRACE_MS = 1000;

/** One helper run. */
export interface HelperRun {
  /** The helper's real path (resolved inside --helpers-dir). */
  readonly path: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  /** Aborts when the Mount is cancelled (its deadline passed, or another object failed). */
  readonly signal: AbortSignal;
  /** Told when the helper starts and ends: kills what it left behind outside its group (orphan-reaper.ts). */
  readonly lifecycle?: HelperLifecycle | undefined;
}

/** How a run ended. stdout is only kept when the helper exited by itself. */
export type HelperOutcome =
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly signal: string | null;
      readonly stdout: Buffer;
      readonly stderr: Buffer;
    }
  | { readonly kind: 'timeout' | 'too-large' | 'cancelled'; readonly stderr: Buffer }
  | { readonly kind: 'start-failed'; readonly errno: string };

/** Runs `run` in a fresh empty temp directory (removed afterwards) and reports how it ended. */
export async function runHelper(run: HelperRun): Promise<HelperOutcome> {
  if (run.signal.aborted) return { kind: 'cancelled', stderr: Buffer.alloc(0) };
  const cwd = await mkdtemp(join(tmpdir(), 'ssc-exec-'));
  try {
    return await spawnAndWait(run, cwd);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/** A helper's exit status. */
type HelperExit = { readonly code: number | null; readonly signal: string | null };

/** Starts the helper in its own process group (execve of the path, never a shell), or says why it could not. */
function spawnHelper(run: HelperRun, cwd: string): ChildProcess | { readonly errno: string } {
  try {
    const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
    return spawn(run.path, run.args, { cwd, env: { ...run.env }, detached: true, stdio, shell: false });
  } catch (err) {
    return { errno: String((err as NodeJS.ErrnoException).code ?? 'error') };
  }
}

/** A helper's stdout, up to its cap, and the first STDERR_KEPT_BYTES of its stderr. */
class HelperOutput {
  readonly #stdout: Buffer[] = [];
  readonly #stderr: Buffer[] = [];
  #stdoutBytes = 0;
  #stderrBytes = 0;

  constructor(private readonly maxStdoutBytes: number) {}

  /** Keeps a chunk of stdout; false, keeping nothing, once stdout is over its cap. */
  addStdout(chunk: Buffer): boolean {
    this.#stdoutBytes += chunk.length;
    if (this.#stdoutBytes > this.maxStdoutBytes) return false;
    this.#stdout.push(chunk);
    return true;
  }

  /** Keeps stderr up to STDERR_KEPT_BYTES. */
  addStderr(chunk: Buffer): void {
    if (this.#stderrBytes >= STDERR_KEPT_BYTES) return;
    const kept = chunk.subarray(0, STDERR_KEPT_BYTES - this.#stderrBytes);
    this.#stderrBytes += kept.length;
    this.#stderr.push(kept);
  }

  /** How the run ended: stopped (`stopped` says why) or exited by itself with `exit`; stdout only then. */
  outcome(stopped: 'timeout' | 'too-large' | 'cancelled' | undefined, exit: HelperExit | undefined): HelperOutcome {
    if (stopped) return { kind: stopped, stderr: this.stderr() };
    const { code = null, signal = null } = exit ?? {};
    return { kind: 'exited', code, signal, stdout: this.stdout(), stderr: this.stderr() };
  }

  stdout(): Buffer {
    return Buffer.concat(this.#stdout);
  }
  stderr(): Buffer {
    return Buffer.concat(this.#stderr);
  }
}

/** What a running helper's events mean to its run. */
interface HelperEvents {
  tooLarge(): void;
  startFailed(errno: string): void;
  exited(code: number | null, signal: NodeJS.Signals | null): void;
  closed(): void;
}

/** Collects the helper's output into `output` and reports its process's events. */
function listen(child: ChildProcess, output: HelperOutput, events: HelperEvents): void {
  let over = false;
  child.stdout?.on('data', (chunk: Buffer) => {
    if (over || output.addStdout(chunk)) return;
    over = true;
    events.tooLarge();
  });
  child.stderr?.on('data', (chunk: Buffer) => output.addStderr(chunk));
  child.on('error', (err: NodeJS.ErrnoException) => {
    // spawn failed (ENOENT, EACCES, ENOEXEC…): no process ran.
    if (child.pid === undefined) events.startFailed(String(err.code ?? 'error'));
  });
  child.on('exit', (code, signal) => events.exited(code, signal));
  child.on('close', () => events.closed());
}

function spawnAndWait(run: HelperRun, cwd: string): Promise<HelperOutcome> {
  return new Promise((resolve) => {
    const child = spawnHelper(run, cwd);
    if ('errno' in child) {
      resolve({ kind: 'start-failed', errno: child.errno });
      return;
    }
    const output = new HelperOutput(run.maxOutputBytes);
    let stopped: 'timeout' | 'too-large' | 'cancelled' | undefined;
    let exit: HelperExit | undefined;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    // Resolves once what the helper left behind outside its group is gone (set at its exit).
    let leftovers: Promise<void> = Promise.resolve();
    if (child.pid !== undefined) run.lifecycle?.started(child.pid);

    const finish = (outcome: HelperOutcome): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      run.signal.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      void leftovers.then(() => resolve(outcome));
    };
    const ended = (): HelperOutcome => output.outcome(stopped, exit);
    /** Gives up on pipes a process outside the group still holds, `ms` from now. */
    const abandonAfter = (ms: number): void => {
      timers.push(setTimeout(() => finish(ended()), ms));
    };
    const stop = (why: 'timeout' | 'too-large' | 'cancelled'): void => {
      if (stopped || settled) return;
      stopped = why;
      child.stdout?.pause();
      killGroup(child, 'SIGTERM');
      timers.push(setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS));
      abandonAfter(KILL_GRACE_MS * 2);
    };
    const onAbort = (): void => stop('cancelled');

    listen(child, output, {
      tooLarge: () => stop('too-large'),
      startFailed: (errno) => finish({ kind: 'start-failed', errno }),
      exited: (code, signal) => {
        exit = { code, signal };
        // Whatever it forked goes with it; their pipes then close.
        killGroup(child, 'SIGKILL');
        // Node.js has reaped the helper: what left its group goes too, before the run ends.
        if (child.pid !== undefined && run.lifecycle) leftovers = run.lifecycle.ended(child.pid);
        abandonAfter(KILL_GRACE_MS);
      },
      closed: () => finish(ended()),
    });
    timers.push(setTimeout(() => stop('timeout'), Math.max(0, run.timeoutMs)));
    if (run.signal.aborted) stop('cancelled');
    else run.signal.addEventListener('abort', onAbort, { once: true });
  });
}
