import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { inlinePublishRequest, inlineVolumeContext } from '../bin/csi-client.js';
import type { NodePublishVolumeRequest } from '../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import {
  idleCpuMsPerSecond,
  memoryBreakdown,
  mib,
  processMemory,
  processTreeCpuPreciseMs,
  threadsCpuMs,
  type MemoryBreakdown,
} from './proc.js';
import { runLimited, VOLUME_NAME } from './rounds.js';
import { objectNames } from './fixtures.js';
import type { DriverUnderTest, Side, Size, VsGoEnv } from './vs-go-env.js';

/**
 * The cases of the side-by-side benchmark. Every timed loop runs in batches, the drivers
 * taking turns (ours, theirs, theirs, ours, …), so machine noise hits both alike. Pods
 * are created in the API before a case starts, outside every timed window.
 */

/** One volume as kubelet publishes it for a pod that exists in the API. */
export interface PodVolume {
  readonly volumeId: string;
  readonly target: string;
  readonly request: NodePublishVolumeRequest;
}

let podSeq = 0;

/**
 * Creates `count` pods on `d`'s node using class `spc` and returns kubelet's requests for
 * their volumes. The target's parent exists, as kubelet makes it (and writes its
 * vol_data.json there) before it calls NodePublishVolume: the driver makes only the target.
 */
export async function podVolumes(env: VsGoEnv, d: DriverUnderTest, spc: string, count: number): Promise<PodVolume[]> {
  const pods = await env.kube.createPods(count, d.nodeName, spc, VOLUME_NAME, `${d.side}-${++podSeq}`);
  return Promise.all(
    pods.map(async (pod) => {
      const volumeId = `csi-${randomUUID().replace(/-/g, '')}`;
      const target = join(d.kubeletDir, 'pods', pod.uid, 'volumes', 'kubernetes.io~csi', VOLUME_NAME, 'mount');
      await mkdir(dirname(target), { recursive: true, mode: 0o750 });
      const ctx = inlineVolumeContext(
        { name: pod.name, namespace: pod.namespace, uid: pod.uid, serviceAccountName: pod.serviceAccountName },
        spc,
      );
      return { volumeId, target, request: inlinePublishRequest(volumeId, target, ctx) };
    }),
  );
}

/**
 * Starts of sequential calls at most one per `paceMs` (start to start): pods arriving on a
 * node one at a time. The Go driver's API client throttles itself (client-go's token
 * bucket, 20 requests/s, about 2 requests per publish): back to back, its latency would be
 * the limiter's wait, not its work. The burst case is where the limiter is measured.
 * A deliberate pacing, not a wait for an event.
 */
export class Pacer {
  private next = 0;
  constructor(private readonly paceMs: number) {}

  async turn(): Promise<void> {
    const wait = this.next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.next = performance.now() + this.paceMs;
  }
}

const timed = async (fn: () => Promise<void>): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

let cleanupRetries = 0;

/** Unpublishes that failed and were retried in untimed cleanup so far (the Go driver's umount sometimes says "target is busy"). */
export const cleanupRetryCount = (): number => cleanupRetries;

/** NodeUnpublishVolume outside any timed window, retried as kubelet does (up to 10 times, 100 ms apart). */
async function unpublishRetrying(d: DriverUnderTest, v: PodVolume): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await d.client.unpublish(v.volumeId, v.target);
      return;
    } catch (err) {
      if (attempt >= 10) throw err;
      cleanupRetries++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Batch sizes summing to `total`. */
export function batches(total: number, batch: number): number[] {
  const out: number[] = [];
  for (let left = total; left > 0; left -= batch) out.push(Math.min(batch, left));
  return out;
}

/** The sides in turn for batch `i`: ABBA order, so neither side always goes first. */
export const turnOrder = <T>(sides: readonly T[], i: number): T[] => (i % 2 === 0 ? [...sides] : [...sides].reverse());

/** Samples of one side in one case. */
export interface SideSamples {
  publishMs: number[];
  unpublishMs: number[];
  /** CPU ms of the process and its exited children over the timed loops. */
  cpuMs: number;
  calls: number;
}

const empty = (): SideSamples => ({ publishMs: [], unpublishMs: [], cpuMs: 0, calls: 0 });

/** Every object of the class with `size` objects is in `target` with the provider's contents (else the numbers mean nothing). */
export async function verifyVolume(env: VsGoEnv, side: Side, size: Size, target: string): Promise<void> {
  const sources = env.sources.get(size)!;
  const names = objectNames(sources);
  for (const [i, source] of sources.entries()) {
    const [got, want] = await Promise.all([
      readFile(join(target, names[i]!)).catch(() => undefined),
      readFile(join(env.providerRoot, source)),
    ]);
    if (!got?.equals(want))
      throw new Error(`${side} driver: ${names[i]} at ${target} is missing or differs from the provider's ${source}`);
  }
}

/** First publish to a new target (checked once per driver), then its unpublish, `iterations` times per driver. */
export async function firstPublish(
  env: VsGoEnv,
  drivers: readonly DriverUnderTest[],
  spc: string,
  size: Size,
  iterations: number,
  batch: number,
  warmup: number,
  paceMs: number,
): Promise<Map<Side, SideSamples>> {
  const pacer = new Pacer(paceMs);
  const out = new Map<Side, SideSamples>(drivers.map((d) => [d.side, empty()]));
  const vols = new Map<Side, PodVolume[]>();
  for (const d of drivers) vols.set(d.side, await podVolumes(env, d, spc, iterations + warmup));
  for (const d of drivers) {
    for (const [i, v] of vols.get(d.side)!.splice(0, warmup).entries()) {
      await d.client.publish(v.request);
      if (i === 0) await verifyVolume(env, d.side, size, v.target);
      await d.client.unpublish(v.volumeId, v.target);
    }
  }
  for (const [i, n] of batches(iterations, batch).entries()) {
    for (const d of turnOrder(drivers, i)) {
      const s = out.get(d.side)!;
      const todo = vols.get(d.side)!.splice(0, n);
      const before = await processTreeCpuPreciseMs(d.process.pid);
      for (const v of todo) {
        await pacer.turn();
        s.publishMs.push(await timed(() => d.client.publish(v.request)));
        s.unpublishMs.push(await timed(() => d.client.unpublish(v.volumeId, v.target)));
      }
      s.cpuMs += (await processTreeCpuPreciseMs(d.process.pid)) - before;
      s.calls += n;
    }
  }
  return out;
}

/** NodePublishVolume again on a published, unchanged volume, `iterations` times per driver. */
export async function republish(
  env: VsGoEnv,
  drivers: readonly DriverUnderTest[],
  spc: string,
  iterations: number,
  batch: number,
  paceMs: number,
): Promise<Map<Side, SideSamples>> {
  const pacer = new Pacer(paceMs);
  const out = new Map<Side, SideSamples>(drivers.map((d) => [d.side, empty()]));
  const vol = new Map<Side, PodVolume>();
  for (const d of drivers) {
    const [v] = await podVolumes(env, d, spc, 1);
    await d.client.publish(v!.request);
    vol.set(d.side, v!);
  }
  try {
    for (const [i, n] of batches(iterations, batch).entries()) {
      for (const d of turnOrder(drivers, i)) {
        const s = out.get(d.side)!;
        const v = vol.get(d.side)!;
        const before = await processTreeCpuPreciseMs(d.process.pid);
        for (let k = 0; k < n; k++) {
          await pacer.turn();
          s.publishMs.push(await timed(() => d.client.publish(v.request)));
        }
        s.cpuMs += (await processTreeCpuPreciseMs(d.process.pid)) - before;
        s.calls += n;
      }
    }
  } finally {
    for (const d of drivers) {
      const v = vol.get(d.side)!;
      await d.client.unpublish(v.volumeId, v.target);
    }
  }
  return out;
}

/** `pods` pods start at once: every publish sent together; the total wall time per round and driver. */
export async function burst(
  env: VsGoEnv,
  drivers: readonly DriverUnderTest[],
  spc: string,
  pods: number,
  rounds: number,
): Promise<Map<Side, number[]>> {
  const out = new Map<Side, number[]>(drivers.map((d) => [d.side, []]));
  const vols = new Map<Side, PodVolume[]>();
  for (const d of drivers) vols.set(d.side, await podVolumes(env, d, spc, pods * rounds));
  for (let r = 0; r < rounds; r++) {
    for (const d of turnOrder(drivers, r)) {
      const todo = vols.get(d.side)!.splice(0, pods);
      out.get(d.side)!.push(await timed(() => runLimited(todo, pods, (v) => d.client.publish(v.request, 120_000))));
      await runLimited(todo, 8, (v) => unpublishRetrying(d, v));
    }
  }
  return out;
}

/**
 * Provider CPU per 10-object Mount: our driver publishes and unpublishes the same 10
 * objects from our `file` provider and (when installed) from upstream's Go fake provider, in turns.
 */
export async function providerCpu(
  env: VsGoEnv,
  ours: DriverUnderTest,
  classes: { file: string; fake: string },
  iterations: number,
  batch: number,
): Promise<{ file: number; fake: number | null }> {
  const sides: { key: 'file' | 'fake'; spc: string; pid: number }[] = [
    { key: 'file', spc: classes.file, pid: env.fileProvider.pid },
  ];
  if (env.fakeProvider) sides.push({ key: 'fake', spc: classes.fake, pid: env.fakeProvider.pid });
  const cpu = { file: 0, fake: 0 };
  const vols = new Map<string, PodVolume[]>();
  for (const s of sides) vols.set(s.key, await podVolumes(env, ours, s.spc, iterations + 2));
  for (const s of sides)
    for (const v of vols.get(s.key)!.splice(0, 2)) {
      await ours.client.publish(v.request);
      await ours.client.unpublish(v.volumeId, v.target);
    }
  for (const [i, n] of batches(iterations, batch).entries()) {
    for (const s of turnOrder(sides, i)) {
      const todo = vols.get(s.key)!.splice(0, n);
      const before = await threadsCpuMs(s.pid);
      for (const v of todo) {
        await ours.client.publish(v.request);
        await ours.client.unpublish(v.volumeId, v.target);
      }
      cpu[s.key] += (await threadsCpuMs(s.pid)) - before;
    }
  }
  return { file: cpu.file / iterations, fake: env.fakeProvider ? cpu.fake / iterations : null };
}

/**
 * Driver RSS (MiB) idle and with each count of `mountedCounts` volumes of `spc` mounted (a
 * fresh driver), and the idle driver's CPU ms per second over `idleWindowMs` after the idle read.
 */
export async function driverRss(
  env: VsGoEnv,
  d: DriverUnderTest,
  spc: string,
  mountedCounts: readonly number[],
  idleWindowMs: number,
): Promise<{ idle: number; idleBreakdown: MemoryBreakdown; idleCpuMsPerS: number; mounted: Map<number, number> }> {
  const idle = mib((await processMemory(d.process.pid)).rssKiB);
  const idleBreakdown = await memoryBreakdown(d.process.pid);
  const [idleCpuMsPerS] = await idleCpuMsPerSecond([d.process.pid], idleWindowMs);
  const mounted = new Map<number, number>();
  const published: PodVolume[] = [];
  try {
    for (const count of [...mountedCounts].sort((a, b) => a - b)) {
      const more = await podVolumes(env, d, spc, count - published.length);
      await runLimited(more, 4, async (v) => {
        await d.client.publish(v.request, 120_000);
        published.push(v);
      });
      await d.client.probe();
      mounted.set(count, mib((await processMemory(d.process.pid)).rssKiB));
    }
  } finally {
    await runLimited(published, 8, (v) => unpublishRetrying(d, v));
  }
  return { idle, idleBreakdown, idleCpuMsPerS: idleCpuMsPerS!, mounted };
}
