// A long-running third-party peer (OpenBao, Postgres) started by a test: its output is
// kept for readiness checks and error messages, and the process and its temp dir go away
// on stop() and, should the test run end without stop(), when this process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temp dir of a peer, removed by remove() or, failing that, when this process exits. */
export interface PeerDir {
  readonly path: string;
  remove(): Promise<void>;
}

/** Makes a temp dir (mode 0700) named after `prefix`; see PeerDir. */
export async function makePeerDir(prefix: string): Promise<PeerDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const onExit = () => rmSync(path, { recursive: true, force: true });
  process.once('exit', onExit);
  return {
    path,
    async remove() {
      process.removeListener('exit', onExit);
      await rm(path, { recursive: true, force: true });
    },
  };
}

/** Spawn settings of a peer: working directory, environment, user. */
export interface PeerSpawnOptions {
  readonly cwd: string;
  /** The whole environment: peers get only what they need, nothing of the test runner's. */
  readonly env: NodeJS.ProcessEnv;
  readonly uid?: number;
  readonly gid?: number;
  /** The signal stop() sends first (default SIGTERM). */
  readonly stopSignal?: NodeJS.Signals;
}

/** A running peer process. */
export interface PeerProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Exit code, or the signal's name. */
  readonly exited: Promise<number | string>;
  /**
   * Resolves once `ready()` holds, checked on every chunk of output and every `pollMs`
   * (0: output only); rejects when the process exits first or after `timeoutMs`.
   */
  until(ready: () => boolean | Promise<boolean>, what: string, timeoutMs: number, pollMs?: number): Promise<void>;
  /** The stop signal (SIGTERM unless told), then SIGKILL after 10 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts `command` as a peer, killed (SIGKILL) when this process exits before stop(). */
export function startPeerProcess(command: string, args: readonly string[], options: PeerSpawnOptions): PeerProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    uid: options.uid,
    gid: options.gid,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const changed = new Set<() => void>();
  const onData = (d: Buffer) => {
    text += d.toString();
    for (const f of changed) f();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string>((resolve) => {
    child.once('error', (err) => {
      text += `\nspawn ${command}: ${err.message}\n`;
      resolve(-1);
    });
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
  });
  let done = false;
  void exited.then(() => {
    done = true;
    for (const f of changed) f();
  });
  // An aborted run (uncaught error, process.exit) skips after hooks: kill synchronously here.
  const onExit = () => {
    child.kill('SIGKILL');
  };
  process.once('exit', onExit);

  return {
    child,
    output: () => text,
    exited,
    async until(ready, what, timeoutMs, pollMs = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (await ready()) return;
        if (done) throw new Error(`${command} exited before ${what}:\n${text}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${text}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            changed.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, pollMs > 0 ? Math.min(pollMs, left) : left);
          changed.add(wake);
        });
      }
    },
    async stop() {
      process.removeListener('exit', onExit);
      if (!done) {
        child.kill(options.stopSignal ?? 'SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
