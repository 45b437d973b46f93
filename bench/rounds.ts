import { randomUUID } from 'node:crypto';
import { readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { inlinePublishRequest, inlineVolumeContext, type CsiClient } from '../bin/csi-client.js';
import type { RoundReport } from '../driver/rotation/reconciler.js';
import type { BenchProcess } from './processes.js';

/**
 * What the rotation benchmarks share: kubelet's side of publishing (Volumes), reading the
 * driver's JSON log for its rotation rounds, and the /metrics text of driver and provider.
 */

/** What the reconciler logs after each round that refreshed something: its own report type. */
export type { RoundReport } from '../driver/rotation/reconciler.js';

/** One JSON log line of the driver or a provider. */
export interface LogLine {
  readonly message?: string;
  readonly [key: string]: unknown;
}

/** A log line parsed, or undefined for anything that is not a JSON object. */
export function parseLogLine(line: string): LogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return undefined;
  }
}

/** The numbers of a `rotation round done` line. */
export function asRound(l: LogLine): RoundReport {
  const n = (k: string) => Number(l[k]);
  return {
    volumes: n('volumes'),
    refreshed: n('refreshed'),
    changed: n('changed'),
    failed: n('failed'),
    deferred: n('deferred'),
    durationMs: n('durationMs'),
  };
}

/** Prometheus text format: the sum of every series of `name` whose labels contain all of `labels`. */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** GET http://127.0.0.1:<port>/metrics. */
export async function scrape(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET :${port}/metrics: HTTP ${res.status}`);
  return res.text();
}

/** A port a process logged at start (`"healthPort":123`), from the start of its log. */
export function loggedPort(p: BenchProcess, field: string): number {
  const m = new RegExp(`"${field}":(\\d+)`).exec(p.stderrTail(100));
  if (!m) throw new Error(`${p.label} did not log its ${field}:\n${p.stderrTail()}`);
  return Number(m[1]);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('interrupted');
}

/**
 * Runs `work` over `items`, `limit` at a time; with `signal`, stops taking new items once it
 * aborts (leave it out for cleanup). The first failure stops taking new items too, and is
 * thrown once the items under way have finished, so nothing runs on after the caller's cleanup.
 */
export async function runLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      throwIfAborted(signal);
      try {
        await work(items[next++] as T);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/** A published volume: kubelet's volume id and target path. */
export interface Volume {
  readonly volumeId: string;
  readonly target: string;
}

/** A pod whose volume the benchmark publishes (in Kubernetes mode it exists in the API). */
export interface BenchPod {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  /** Default `default`. */
  readonly serviceAccountName?: string;
  /** The `csi.storage.k8s.io/serviceAccount.tokens` kubelet passes when the CSIDriver has tokenRequests. */
  readonly tokens?: string;
  /** The nodePublishSecretRef Secret's data kubelet passes, if the volume has one. */
  readonly secrets?: Readonly<Record<string, string>>;
}

/** The pod volume's name: kubelet's target path ends in kubernetes.io~csi/<name>/mount. */
export const VOLUME_NAME = 'secrets-store';

/** Kubelet's side against the driver: publishes, remembers, and unpublishes everything at the end. */
export class Volumes {
  readonly published = new Map<string, Volume>();

  /** `concurrency`: calls at a time; `signal` stops publishing (not unpublishing) when it aborts. */
  constructor(
    private readonly client: CsiClient,
    private readonly kubeletDir: string,
    private readonly spcName: string,
    private readonly concurrency: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** Publishes one volume (named VOLUME_NAME) per pod, `concurrency` at a time. */
  async publish(pods: readonly BenchPod[]): Promise<Volume[]> {
    const vols = pods.map((pod): Volume & { request: ReturnType<typeof inlinePublishRequest> } => {
      const volumeId = `csi-${randomUUID().replace(/-/g, '')}`;
      const target = join(this.kubeletDir, 'pods', pod.uid, 'volumes', 'kubernetes.io~csi', VOLUME_NAME, 'mount');
      const ctx = inlineVolumeContext(
        {
          name: pod.name,
          namespace: pod.namespace,
          uid: pod.uid,
          serviceAccountName: pod.serviceAccountName ?? 'default',
        },
        this.spcName,
      );
      if (pod.tokens !== undefined) ctx['csi.storage.k8s.io/serviceAccount.tokens'] = pod.tokens;
      return { volumeId, target, request: inlinePublishRequest(volumeId, target, ctx, { ...pod.secrets }) };
    });
    await runLimited(
      vols,
      this.concurrency,
      async (v) => {
        this.published.set(v.target, { volumeId: v.volumeId, target: v.target });
        await this.client.publish(v.request);
      },
      this.signal,
    );
    return vols.map(({ volumeId, target }) => ({ volumeId, target }));
  }

  /**
   * Unpublishes everything (also after a failure). A refresh holding the target makes the
   * driver refuse with ABORTED (OperationInProgress); kubelet retries, so do we.
   */
  async unpublishAll(): Promise<void> {
    let first: unknown;
    await runLimited([...this.published.values()], this.concurrency, async (v) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.client.unpublish(v.volumeId, v.target);
          this.published.delete(v.target);
          return;
        } catch (err) {
          const aborted = (err as { code?: number }).code === 10;
          if (!aborted || attempt >= 50) {
            first ??= err;
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }).catch((err: unknown) => {
      first ??= err;
    });
    if (first !== undefined) throw first;
  }
}

/** Where each volume's `..data` link points: a change means the round rewrote its files. */
export async function dataLinks(vols: readonly Volume[]): Promise<string[]> {
  return Promise.all(vols.map((v) => readlink(join(v.target, '..data')).catch(() => '')));
}

/** How many entries differ between two dataLinks() results. */
export const countMoved = (before: readonly string[], after: readonly string[]): number =>
  before.filter((b, i) => b !== after[i]).length;

/**
 * Resolves with the driver's next `rotation round done` line; rejects if the driver exits,
 * after `timeoutMs`, or when `signal` aborts. `onRotated` sees each `volume rotated` target.
 */
export function nextRound(
  driver: BenchProcess,
  options: { timeoutMs: number; signal: AbortSignal; onRotated?: (targetPath: string) => void },
): { round: Promise<RoundReport>; cancel: () => void } {
  const { timeoutMs, signal, onRotated } = options;
  let cancel = () => undefined as void;
  const round = new Promise<RoundReport>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no rotation round within ${timeoutMs / 1000}s`)), timeoutMs);
    const onAbort = () => done(new Error('interrupted'));
    const off = driver.onLine((line) => {
      const l = parseLogLine(line);
      if (l?.message === 'volume rotated' && typeof l['targetPath'] === 'string') onRotated?.(l['targetPath']);
      if (l?.message === 'rotation round done') done(undefined, asRound(l));
    });
    void driver
      .exited()
      .then((code) => done(new Error(`the driver exited (${code}) while waiting for a rotation round`)));
    signal.addEventListener('abort', onAbort);
    let settled = false;
    function done(err: Error | undefined, r?: RoundReport): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      off();
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(r!);
    }
    cancel = () => done(new Error('cancelled'));
  });
  round.catch(() => undefined); // a cancelled wait nobody awaits must not crash the process
  return { round, cancel };
}

/** The one timed wait: a paused driver is held until every volume is due (bench/README.md: "How a full round is made"). */
export async function holdUntil(deadline: number, signal: AbortSignal): Promise<void> {
  const ms = deadline - Date.now();
  if (ms <= 0) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('interrupted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** SIGSTOP/SIGCONT of the driver, so that one full round can be made and measured. */
export class DriverPause {
  private paused = false;
  /** When the last pause began (ms since the epoch). */
  stoppedAt = 0;

  constructor(private readonly driver: BenchProcess) {}

  pause(): void {
    process.kill(this.driver.pid, 'SIGSTOP');
    this.paused = true;
    this.stoppedAt = Date.now();
  }

  /** Resumes the driver if paused; always call it before cleanup (a stopped process does not act on SIGTERM). */
  resume(): void {
    if (this.paused && this.driver.running) process.kill(this.driver.pid, 'SIGCONT');
    this.paused = false;
  }
}
