import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from '../../bin/csi-client.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';

/** Options for a driver (and optionally a file provider) started for one test file. */
export interface StackOptions {
  /** SecretProviderClass YAML documents by file name, written into the --spc-dir. */
  readonly classes?: Readonly<Record<string, string>>;
  /** Files for the file provider's root, by relative path; omit to run no file provider. */
  readonly providerFiles?: Readonly<Record<string, string>>;
  readonly driverArgs?: readonly string[];
  /** Kubernetes mode: the driver reads classes from this cluster instead of --spc-dir. */
  readonly kubeconfig?: string;
  /** Start a new driver in an existing stack's directories (a driver restart); stop() then stops both. */
  readonly reuse?: DriverStack;
  readonly mountMode?: 'tmpfs' | 'dir';
  /** An existing empty directory to work in instead of a fresh temp dir (its paths known before the driver starts); stop() removes it. */
  readonly work?: string;
  /** Environment variables added to the driver's. */
  readonly driverEnv?: Readonly<Record<string, string>>;
}

/** A running driver in a temp dir, with a CSI client and helpers to publish like kubelet. */
export interface DriverStack {
  readonly work: string;
  readonly providersDir: string;
  readonly spcDir: string;
  readonly providerRoot: string;
  readonly socketPath: string;
  readonly client: CsiClient;
  readonly driver: Child;
  /** The file provider, when the stack runs one (a restarted driver's stack keeps the old one's). */
  readonly provider: Child | undefined;
  readonly metricsPort: number;
  /** A fresh target path under the work dir (not created). */
  targetPath(name: string): string;
  /** The NodePublishVolumeRequest kubelet would send for pod default/<pod> and class `spc`. */
  request(targetPath: string, spc: string, pod?: string, namespace?: string, uid?: string): NodePublishVolumeRequest;
  /** GET /metrics text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

/** True when tests may mount tmpfs (root); otherwise stacks fall back to --mount-mode=dir. */
export const CAN_MOUNT = process.getuid?.() === 0;

async function writeTree(root: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [rel, contents] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), contents);
  }
}

/** Starts the real driver process (and the file provider when asked) on sockets in a temp dir. */
export async function startDriverStack(options: StackOptions = {}): Promise<DriverStack> {
  const work = options.reuse?.work ?? options.work ?? (await mkdtemp(join(tmpdir(), 'ssc-it-')));
  const providersDir = join(work, 'providers');
  const spcDir = join(work, 'spc');
  const providerRoot = join(work, 'provider-root');
  await mkdir(providersDir, { recursive: true });
  await mkdir(spcDir, { recursive: true });
  await writeTree(spcDir, options.classes ?? {});
  const children: Child[] = [];
  let provider = options.reuse?.provider;
  try {
    if (options.providerFiles && !options.reuse) {
      await writeTree(providerRoot, options.providerFiles);
      children.push(
        (provider = await startCli(
          [
            'provider',
            'file',
            `--endpoint=unix://${join(providersDir, 'file.sock')}`,
            `--root=${providerRoot}`,
            `--hmac-key-file=${join(work, 'hmac.key')}`,
          ],
          /provider started/,
        )),
      );
    }
    const socketPath = join(work, 'csi.sock');
    const mountMode = options.mountMode ?? (CAN_MOUNT ? 'tmpfs' : 'dir');
    const driver = await startCli(
      [
        'driver',
        `--endpoint=unix://${socketPath}`,
        '--nodeid=test-node',
        `--provider-volume=${providersDir}`,
        '--additional-provider-volume-paths=',
        options.kubeconfig ? `--kubeconfig=${options.kubeconfig}` : `--spc-dir=${spcDir}`,
        `--mount-mode=${mountMode}`,
        '--metrics-addr=127.0.0.1:0',
        '--log-level=debug',
        ...(options.driverArgs ?? []),
      ],
      /driver started/,
      options.driverEnv ? { env: { ...process.env, ...options.driverEnv } } : {},
    );
    children.push(driver);
    const metricsPort = Number(/"metricsPort":(\d+)/.exec(driver.stderr())?.[1]);
    const client = new CsiClient(socketPath);
    return {
      work,
      providersDir,
      spcDir,
      providerRoot,
      socketPath,
      client,
      driver,
      provider,
      metricsPort,
      targetPath: (name) => join(work, 'pods', name, 'volumes', 'secrets-store'),
      request: (targetPath, spc, pod = 'test-pod', namespace = 'default', uid = `uid-${pod}`) =>
        inlinePublishRequest(
          `vol-${pod}`,
          targetPath,
          inlineVolumeContext({ name: pod, namespace, uid, serviceAccountName: 'default' }, spc),
        ),
      metrics: async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
      async stop() {
        client.close();
        for (const c of children.reverse()) await c.stop();
        if (options.reuse) {
          await options.reuse.stop();
          return;
        }
        await unmountAllUnder(work);
        await rm(work, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const c of children.reverse()) await c.stop();
    if (!options.reuse) await rm(work, { recursive: true, force: true });
    throw err;
  }
}

/** Mount points at or below `dir` in /proc/self/mountinfo (tests assert none are left). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const { mountPointsUnder } = await import('../../driver/mount/mountinfo.js');
  return mountPointsUnder(await readFile('/proc/self/mountinfo', 'utf8'), dir);
}

/**
 * Unmounts whatever a failed test left under `dir`, deepest first, so cleanup never leaks
 * mounts; repeated while some remain, since mounts stacked on one path go one at a time.
 */
export async function unmountAllUnder(dir: string): Promise<void> {
  if (!CAN_MOUNT) return;
  const { execFile } = await import('node:child_process');
  for (let pass = 0; pass < 10; pass++) {
    const left = await mountsUnder(dir);
    if (left.length === 0) return;
    for (const mp of left) await new Promise<void>((resolve) => execFile('umount', [mp], () => resolve()));
  }
}

/** A file-provider SecretProviderClass YAML document. */
export function fileClass(
  name: string,
  objects: readonly { objectName: string; sourcePath?: string; mode?: string }[],
  provider = 'file',
): string {
  const lines = objects
    .map(
      (o) =>
        `      - objectName: ${JSON.stringify(o.objectName)}\n${o.sourcePath ? `        sourcePath: ${JSON.stringify(o.sourcePath)}\n` : ''}${o.mode ? `        mode: "${o.mode}"\n` : ''}`,
    )
    .join('');
  return `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${name}
  namespace: default
spec:
  provider: ${provider}
  parameters:
    objects: |
${lines}`;
}

/** The driver's JSON log lines logged at or after `since` (epoch ms), from its stderr tail. */
export function driverLogSince(stack: DriverStack, since: number): Record<string, unknown>[] {
  return stack.driver
    .stderr()
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        return Date.parse(String(entry['timestamp'])) >= since ? [entry] : [];
      } catch {
        return []; // the tail's first, cut line
      }
    });
}

/** Rotation rounds the driver finished since `since` (epoch ms). */
export function rotationRoundsSince(stack: DriverStack, since: number): number {
  return driverLogSince(stack, since).filter((e) => e['message'] === 'rotation round done').length;
}

/**
 * Resolves with `check`'s first truthy value, checking again each time the driver logs
 * (with rotation on it logs every round): an event to wait on, not a sleep.
 */
export async function whenDriverLogs<T>(
  stack: DriverStack,
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 45_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    const stderr = stack.driver.process.stderr;
    if (!stderr) throw new Error('the driver has no stderr');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      function done() {
        clearTimeout(timer);
        stderr?.off('data', done);
        resolve();
      }
      stderr.once('data', done);
    });
  }
}
