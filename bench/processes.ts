import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CsiClient } from '../bin/csi-client.js';
import { CLI_PATH, startProcess, type Child } from '../bin/child-process.js';
import { NODE_FLAGS } from '../lib/node-flags.js';

export type MountMode = 'tmpfs' | 'dir';

const TAIL_BYTES = 16 * 1024;

/**
 * A started driver or provider. Once it is ready we keep only the tail of its stderr:
 * `startProcess` appends every chunk to one string and re-tests the ready pattern on the
 * whole of it, which would make the benchmark process itself slower as logs pile up.
 */
export class BenchProcess {
  private tail = '';
  private partialLine = '';
  private readonly lineListeners = new Set<(line: string) => void>();

  private constructor(
    readonly label: string,
    private readonly child: Child,
  ) {
    const stderr = child.process.stderr;
    if (stderr) {
      this.tail = child.stderr().slice(-TAIL_BYTES);
      stderr.removeAllListeners('data');
      stderr.on('data', (d: Buffer) => {
        const text = d.toString();
        this.tail = (this.tail + text).slice(-TAIL_BYTES);
        if (this.lineListeners.size === 0) {
          this.partialLine = '';
          return;
        }
        const lines = (this.partialLine + text).split('\n');
        this.partialLine = lines.pop() ?? '';
        for (const line of lines) for (const listener of this.lineListeners) listener(line);
      });
    }
  }

  /** Starts `secrets-store-csi <args>` like `startCli`, with optional node flags before the script. */
  static async start(
    label: string,
    args: readonly string[],
    ready: RegExp,
    nodeFlags: readonly string[] = [],
  ): Promise<BenchProcess> {
    return new BenchProcess(label, await startProcess(benchNode().path, [...nodeFlags, CLI_PATH, ...args], ready));
  }

  /** Starts another program (a peer binary such as upstream's Go driver) the same way. */
  static async startBinary(
    label: string,
    binary: string,
    args: readonly string[],
    ready: RegExp,
  ): Promise<BenchProcess> {
    return new BenchProcess(label, await startProcess(binary, args, ready));
  }

  get pid(): number {
    const pid = this.child.process.pid;
    if (pid === undefined) throw new Error(`${this.label} has no pid`);
    return pid;
  }

  get running(): boolean {
    return this.child.process.exitCode === null && this.child.process.signalCode === null;
  }

  /** Calls `listener` with every complete stderr line written from now on; returns the unsubscribe. */
  onLine(listener: (line: string) => void): () => void {
    this.lineListeners.add(listener);
    return () => {
      this.lineListeners.delete(listener);
    };
  }

  /** Resolves with the exit code when the process exits (at once if it already has). */
  exited(): Promise<number | null> {
    const p = this.child.process;
    if (!this.running) return Promise.resolve(p.exitCode);
    return new Promise((resolve) => p.once('exit', (code) => resolve(code)));
  }

  /** The last lines it wrote to stderr (its JSON log), for error messages. */
  stderrTail(lines = 20): string {
    return this.tail.split('\n').filter(Boolean).slice(-lines).join('\n');
  }

  stop(): Promise<number | null> {
    return this.child.stop();
  }
}

/**
 * The node flags the driver and provider start with: the images' NODE_FLAGS, or
 * BENCH_NODE_FLAGS (space-separated; empty for none) to measure another choice.
 */
export function benchNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env['BENCH_NODE_FLAGS'];
  return raw === undefined ? [...NODE_FLAGS] : raw.split(/\s+/).filter(Boolean);
}

/** The Node.js our driver and providers run on in a benchmark, and why that one. */
export interface BenchNode {
  readonly path: string;
  readonly version: string;
  /** `image`: the images' pinned Node (.ci/install-node); `BENCH_NODE`: chosen; `fallback`: the pin could not be had. */
  readonly source: 'image' | 'BENCH_NODE' | 'fallback';
  readonly note?: string;
}

const INSTALL_NODE = fileURLToPath(new URL('../../.ci/install-node', import.meta.url));
let resolvedNode: BenchNode | undefined;

/**
 * The node binary of the benchmarked processes: the images' own (Dockerfile.driver's
 * pinned version, installed once and cached by .ci/install-node, as CI does), so a
 * benchmark measures what a DaemonSet runs (Node 24 maps ~17 MiB more
 * of its binary than the Node 20 a developer machine may have). BENCH_NODE=<path> runs
 * another node (an experiment: latest results stay).
 */
export function benchNode(env: NodeJS.ProcessEnv = process.env): BenchNode {
  if (resolvedNode) return resolvedNode;
  const versionOf = (path: string) => execFileSync(path, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
  const chosen = env['BENCH_NODE'];
  if (chosen) return (resolvedNode = { path: chosen, version: versionOf(chosen), source: 'BENCH_NODE' });
  try {
    const prefix = execFileSync('bash', [INSTALL_NODE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    const path = join(prefix, 'bin', 'node');
    resolvedNode = { path, version: versionOf(path), source: 'image' };
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    resolvedNode = {
      path: process.execPath,
      version: process.version,
      source: 'fallback',
      note: `the images' Node could not be installed (${reason ?? ''}): this node runs them`,
    };
  }
  return resolvedNode;
}

/**
 * Whether the processes run as the images run them: their node binary and node flags
 * (else the run is an experiment and latest results stay).
 */
export function usesImageNodeFlags(env: NodeJS.ProcessEnv = process.env): boolean {
  return benchNodeFlags(env).join(' ') === NODE_FLAGS.join(' ') && benchNode(env).source === 'image';
}

/** With BENCH_CPU_PROF=<dir>, a process writes a V8 CPU profile there when it exits (not allowed in NODE_OPTIONS). */
export function processNodeFlags(cpuProfDir: string | undefined): string[] {
  return [...benchNodeFlags(), ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [])];
}

/** The file provider on `<work>/providers/file.sock`, serving `root`. */
export function startFileProvider(
  work: string,
  root: string,
  cpuProfDir?: string,
  extraArgs: readonly string[] = [],
): Promise<BenchProcess> {
  return BenchProcess.start(
    'file provider',
    [
      'provider',
      'file',
      `--endpoint=unix://${join(work, 'providers', 'file.sock')}`,
      `--root=${root}`,
      `--hmac-key-file=${join(work, 'hmac.key')}`,
      ...extraArgs,
    ],
    /provider started/,
    processNodeFlags(cpuProfDir),
  );
}

/** The vault provider on `<work>/providers/vault.sock`, with Vault at `vaultAddress` (plain HTTP or `extraArgs` for TLS). */
export function startVaultProvider(
  work: string,
  vaultAddress: string,
  cpuProfDir?: string,
  extraArgs: readonly string[] = [],
): Promise<BenchProcess> {
  return BenchProcess.start(
    'vault provider',
    [
      'provider',
      'vault',
      `--endpoint=unix://${join(work, 'providers', 'vault.sock')}`,
      `--vault-addr=${vaultAddress}`,
      `--hmac-key-file=${join(work, 'hmac.key')}`,
      ...extraArgs,
    ],
    /provider started/,
    processNodeFlags(cpuProfDir),
  );
}

/** A driver in local mode on `socketPath`, reading classes from `spcDir`, with default (info) logging and metrics on. */
export function startDriver(
  work: string,
  socketPath: string,
  spcDir: string,
  mountMode: MountMode,
  cpuProfDir?: string,
  extraArgs: readonly string[] = [],
): Promise<BenchProcess> {
  return BenchProcess.start(
    'driver',
    localDriverArgs(work, socketPath, spcDir, mountMode, extraArgs),
    /driver started/,
    processNodeFlags(cpuProfDir),
  );
}

/** The arguments of a benchmark driver in local mode (`secrets-store-csi driver …`). */
export function localDriverArgs(
  work: string,
  socketPath: string,
  spcDir: string,
  mountMode: MountMode,
  extraArgs: readonly string[] = [],
): string[] {
  return [
    'driver',
    `--endpoint=unix://${socketPath}`,
    '--nodeid=bench-node',
    `--provider-volume=${join(work, 'providers')}`,
    '--additional-provider-volume-paths=',
    `--spc-dir=${spcDir}`,
    `--mount-mode=${mountMode}`,
    '--metrics-addr=127.0.0.1:0',
    ...extraArgs,
  ];
}

/** How the benchmarks decide the mount mode: tmpfs as root, else plain directories; BENCH_MOUNT_MODE forces one. */
export function chooseMountMode(env: NodeJS.ProcessEnv = process.env): { mode: MountMode; reason: string } {
  const forced = env['BENCH_MOUNT_MODE'];
  if (forced !== undefined && forced !== '') {
    if (forced !== 'tmpfs' && forced !== 'dir')
      throw new Error(`BENCH_MOUNT_MODE must be tmpfs or dir, got "${forced}"`);
    return { mode: forced, reason: 'BENCH_MOUNT_MODE' };
  }
  return process.getuid?.() === 0
    ? { mode: 'tmpfs', reason: 'running as root' }
    : { mode: 'dir', reason: 'not root: no tmpfs mounts' };
}

/**
 * Runs `body` against a started driver, then always unpublishes what it published, closes
 * the client and stops the driver. A failure carries the driver's last log lines; a
 * cleanup failure after it is only reported (`progress`), the first error wins.
 */
export async function withDriverSession<T>(
  driver: BenchProcess,
  client: CsiClient,
  unpublishAll: () => Promise<void>,
  progress: (text: string) => void,
  body: () => Promise<T>,
): Promise<T> {
  let failed = false;
  try {
    return await body();
  } catch (err) {
    failed = true;
    const log = `\n--- driver log (last lines) ---\n${driver.stderrTail()}`;
    // Some errors (a DOMException from an aborted fetch) have a read-only message.
    if (err instanceof Error && Object.getOwnPropertyDescriptor(err, 'message')?.writable) {
      err.message += log;
      throw err;
    }
    throw new Error(`${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}${log}`, { cause: err });
  } finally {
    try {
      await unpublishAll();
    } catch (err) {
      // The cleanup's error is the run's error when the run itself went well.
      // eslint-disable-next-line no-unsafe-finally
      if (!failed) throw err;
      progress(`cleanup: unpublish failed too: ${(err as Error).message.split('\n')[0]}`);
    } finally {
      client.close();
      await driver.stop();
    }
  }
}
