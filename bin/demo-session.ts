import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountPointsUnder } from '../driver/mount/mountinfo.js';
import { mountProgram } from '../driver/mount/mount-syscalls.js';
import { startCli, startProcess, type Child } from './child-process.js';

/**
 * The signals the demo turns into a clean stop, with the shell's exit code for each (128 +
 * number). SIGHUP: the terminal was closed or the SSH session dropped; by default it would
 * end the demo at once, its tmpfs of demo secrets still mounted.
 */
const STOP_SIGNALS: Readonly<Record<string, number>> = Object.freeze({ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 });

/** How long close() waits for a stopped step's work to settle before it deletes the dir anyway. */
const INFLIGHT_GRACE_MS = 10_000;

/** Options of DemoSession.open (tests shorten the grace). */
export interface DemoSessionOptions {
  readonly inflightGraceMs?: number;
}

/** The demo was stopped by a signal, after cleaning up; cli.ts prints it and exits with `exitCode`. */
export class DemoInterrupted extends Error {
  constructor(
    readonly signal: string,
    readonly exitCode: number,
  ) {
    super(`demo stopped by ${signal}; cleaned up`);
  }
}

/**
 * What the demo sets up (a temp dir, child processes, a volume), torn down in reverse
 * after success, a failure, or SIGHUP/SIGINT/SIGTERM at any moment: nothing
 * stays mounted, running or on disk. A terminal's Ctrl-C also reaches the children
 * (one process group), so the driver may be gone before it can unpublish: close()
 * unmounts what is left under the temp dir itself.
 */
export class DemoSession {
  private readonly abort = new AbortController();
  private readonly children: Child[] = [];
  private readonly starting = new Set<Promise<Child>>();
  /** Teardowns of what is not a child (a detached control plane), run after the children stopped. */
  private readonly teardowns: (() => Promise<void>)[] = [];
  /** Work a step started and a signal stopped waiting for (a copy, a call): settled before the dir goes. */
  private readonly inflight = new Set<Promise<unknown>>();
  private stoppedBy: string | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    if (this.stoppedBy !== undefined) return; // already cleaning up: finish that rather than leave a mount
    this.stoppedBy = signal;
    // A hung-up terminal fails every write (EIO): the cleanup must not die on its progress lines.
    if (signal === 'SIGHUP') for (const out of [process.stdout, process.stderr]) out.on('error', () => undefined);
    process.stderr.write(`secrets-store-csi: demo: ${signal}: stopping and cleaning up\n`);
    this.abort.abort(new Error(`stopped by ${signal}`));
  };

  private constructor(
    readonly work: string,
    private readonly inflightGraceMs: number,
  ) {}

  /** Installs the signal handlers, then makes the temp dir (a signal in between is handled too). */
  static async open(options: DemoSessionOptions = {}): Promise<DemoSession> {
    let pending: NodeJS.Signals | undefined;
    const early = (signal: NodeJS.Signals) => {
      pending ??= signal;
    };
    for (const s of Object.keys(STOP_SIGNALS)) process.on(s, early);
    const session = new DemoSession(
      await mkdtemp(join(tmpdir(), 'ssc-demo-')),
      options.inflightGraceMs ?? INFLIGHT_GRACE_MS,
    );
    for (const s of Object.keys(STOP_SIGNALS)) {
      process.off(s, early);
      process.on(s, session.onSignal);
    }
    if (pending) session.onSignal(pending);
    return session;
  }

  /** Resolves like `promise`, or rejects as soon as a stop signal arrives (the promise may settle later, unobserved). */
  step<T>(promise: Promise<T>): Promise<T> {
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.inflight.add(settled);
    void settled.then(() => this.inflight.delete(settled));
    const signal = this.abort.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** Starts `secrets-store-csi <args>` as a child that close() stops, also while it is still starting. */
  start(args: readonly string[], ready: RegExp, env?: NodeJS.ProcessEnv): Promise<Child> {
    return this.track(startCli(args, ready, { signal: this.abort.signal, ...(env ? { env } : {}) }));
  }

  /** Starts another program (OpenBao's `bao`) with `env`, stopped by close() like start()'s children. */
  startProgram(command: string, args: readonly string[], ready: RegExp, env: NodeJS.ProcessEnv): Promise<Child> {
    return this.track(startProcess(command, args, ready, { signal: this.abort.signal, env }));
  }

  /** Has close() run `teardown` after it stopped the children, before it deletes the dir (last added runs first). */
  onClose(teardown: () => Promise<void>): void {
    this.teardowns.push(teardown);
  }

  /** Keeps `started` where close() finds it: starting, then running. */
  private async track(started: Promise<Child>): Promise<Child> {
    this.starting.add(started);
    try {
      const child = await this.step(started);
      this.children.push(child);
      return child;
    } finally {
      // Ready after a signal: stopped by close() all the same.
      void started
        .then(
          (child) => {
            if (!this.children.includes(child)) this.children.push(child);
          },
          () => undefined,
        )
        .finally(() => this.starting.delete(started));
    }
  }

  /**
   * Tears down: `beforeStop` (unpublish through the driver, if it still runs), then the
   * children, then the onClose teardowns, then any mount left under the temp dir, then the dir. Throws
   * DemoInterrupted when a signal ended the demo.
   */
  async close(beforeStop: () => Promise<void>): Promise<void> {
    if (!this.abort.signal.aborted) this.abort.abort(new Error('demo finished'));
    await Promise.allSettled([...this.starting]);
    await beforeStop().catch(() => undefined);
    for (const child of this.children.splice(0).reverse()) await child.stop();
    for (const teardown of this.teardowns.splice(0).reverse()) {
      await teardown().catch((err: unknown) => {
        process.stderr.write(`secrets-store-csi: demo: cleanup: ${(err as Error).message}\n`);
      });
    }
    // With the driver gone, calls and log waits end; a copy into the dir must end before rm.
    // The grace timer holds the event loop: work that never settles (and holds nothing)
    // must not let Node exit here with code 0, skipping the cleanup below.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inflight]),
      new Promise((resolve) => {
        grace = setTimeout(resolve, this.inflightGraceMs);
      }),
    ]);
    clearTimeout(grace);
    await this.unmountLeftovers();
    await rm(this.work, { recursive: true, force: true }).catch((err: unknown) => {
      process.stderr.write(`secrets-store-csi: demo: could not delete ${this.work}: ${(err as Error).message}\n`);
    });
    for (const s of Object.keys(STOP_SIGNALS)) process.off(s, this.onSignal);
    if (this.stoppedBy !== undefined) throw new DemoInterrupted(this.stoppedBy, STOP_SIGNALS[this.stoppedBy] ?? 1);
  }

  private async unmountLeftovers(): Promise<void> {
    const real = await realpath(this.work).catch(() => this.work);
    const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
    for (const mountPoint of mountPointsUnder(text, real)) {
      await mountProgram.unmount(mountPoint).catch((err: unknown) => {
        process.stderr.write(`secrets-store-csi: demo: could not unmount ${mountPoint}: ${(err as Error).message}\n`);
      });
    }
  }
}
