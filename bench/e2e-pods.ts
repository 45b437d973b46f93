import type { V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { E2E_IMAGE } from '../test/support/e2e-image.js';
import { e2eSkipReason, startE2eNode, type E2eNode } from '../test/support/e2e-node.js';
import { csiPod, writeProviderFile } from '../test/support/e2e-pods.js';
import { createNamespace } from '../test/support/kube-cluster.js';
import { createSecretProviderClass } from '../test/support/kube-objects.js';
import { mib, mountsUnder, processCpuMs, processMemory } from './proc.js';
import { machineLine, positiveIntEnv, runBench, startBenchRun, table, writeBenchResults } from './report.js';
import { rounded, summarize, type LatencySummary } from './stats.js';
import { progressLine } from './run-control.js';

/**
 * `npm run bench` (last) or `npm run bench:e2e`: N pods created at once on a real kubelet
 * and containerd node (test/support/e2e-node.ts), with our CSI inline volume and, for
 * comparison, the same pods without it: time until every pod is Ready and until every pod
 * is gone again, the driver's RSS and the CPU of driver, provider and kubelet. Skipped,
 * with the reason printed, where the end-to-end pieces are missing (see bench/README.md).
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/e2e-pods.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');
const OBJECTS = 5;
const OBJECT_SIZE = 1024;
const SAMPLE_MS = 100;
const BATCH_TIMEOUT_MS = 300_000;
const CLASS = 'bench';
/** Reads one secret file, then idles: Ready as soon as it runs (no probe), as most pods with a CSI secret volume would be. */
const SCRIPT = 'cat /mnt/secrets-store/obj-0 >/dev/null; exec sleep 2147483647';

const progress = progressLine('e2e-pods');

type Kind = 'csi' | 'plain';

/** The bench pod: with the CSI volume of class CLASS, or the same pod without it. */
function benchPod(node: E2eNode, name: string, kind: Kind, batch: string): V1Pod {
  const pod = csiPod(node, name, CLASS, kind === 'csi' ? SCRIPT : 'exec sleep 2147483647', E2E_IMAGE);
  pod.metadata = { ...pod.metadata, labels: { batch } };
  if (kind === 'plain') {
    delete pod.spec?.volumes;
    for (const c of pod.spec?.containers ?? []) delete c.volumeMounts;
  }
  return pod;
}

function isReady(p: V1Pod): boolean {
  return (
    p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

interface ProcessCosts {
  /** CPU ms over the batch (creation until every pod is Ready). */
  driverCpuMs: number;
  providerCpuMs: number;
  kubeletCpuMs: number;
  containerdCpuMs: number;
}

interface BatchResult {
  readonly kind: Kind;
  readonly pods: number;
  /** From the first create call until every pod was seen Ready. */
  readonly allReadyMs: number;
  /** Per pod: from the first create call until it was first seen Ready (sampled every SAMPLE_MS). */
  readonly readyMs: LatencySummary;
  /** From the delete call until the last pod object was gone (and, with CSI volumes, the last tmpfs unmounted). */
  readonly allGoneMs: number;
  readonly cpuMs: ProcessCosts;
  readonly driverRssMiB: { readonly before: number; readonly peak: number; readonly after: number };
}

/** The pids whose CPU a batch reports. */
interface Pids {
  driver: number;
  provider: number;
  kubelet: number;
  containerd: number;
}

async function cpuOf(pids: Pids): Promise<ProcessCosts> {
  return {
    driverCpuMs: await processCpuMs(pids.driver),
    providerCpuMs: await processCpuMs(pids.provider),
    kubeletCpuMs: await processCpuMs(pids.kubelet),
    containerdCpuMs: await processCpuMs(pids.containerd),
  };
}

function cpuDelta(a: ProcessCosts, b: ProcessCosts): ProcessCosts {
  return {
    driverCpuMs: b.driverCpuMs - a.driverCpuMs,
    providerCpuMs: b.providerCpuMs - a.providerCpuMs,
    kubeletCpuMs: b.kubeletCpuMs - a.kubeletCpuMs,
    containerdCpuMs: b.containerdCpuMs - a.containerdCpuMs,
  };
}

/** Polls `check` every SAMPLE_MS (also sampling the driver's RSS) until it returns true; rejects after BATCH_TIMEOUT_MS. */
async function sampleUntil(what: string, check: () => Promise<boolean>, onSample: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + BATCH_TIMEOUT_MS;
  for (;;) {
    await onSample();
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${BATCH_TIMEOUT_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
}

/** Creates `count` pods of `kind` at once, waits until all are Ready, deletes them and waits until they are gone. */
async function runBatch(
  node: E2eNode,
  ns: string,
  kind: Kind,
  count: number,
  batch: string,
  pids: Pids,
): Promise<BatchResult> {
  const core = node.cluster.admin.core;
  const labelSelector = `batch=${batch}`;
  const rssBefore = (await processMemory(pids.driver)).rssKiB;
  let rssPeak = rssBefore;
  const sampleRss = async () => {
    rssPeak = Math.max(rssPeak, (await processMemory(pids.driver)).rssKiB);
  };
  const cpuBefore = await cpuOf(pids);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      core.createNamespacedPod({ namespace: ns, body: benchPod(node, `${batch}-${i}`, kind, batch) }),
    ),
  );
  const readyAt = new Map<string, number>();
  await sampleUntil(
    `${count} ${kind} pods to be Ready`,
    async () => {
      const now = performance.now() - started;
      for (const p of (await core.listNamespacedPod({ namespace: ns, labelSelector })).items) {
        const name = p.metadata?.name ?? '';
        if (isReady(p) && !readyAt.has(name)) readyAt.set(name, now);
      }
      return readyAt.size === count;
    },
    sampleRss,
  );
  const allReadyMs = Math.max(...readyAt.values());
  const cpuMs = cpuDelta(cpuBefore, await cpuOf(pids));
  const rssAfter = (await processMemory(pids.driver)).rssKiB;

  const deleting = performance.now();
  await core.deleteCollectionNamespacedPod({ namespace: ns, labelSelector });
  await sampleUntil(
    `the ${kind} pods to be gone`,
    async () =>
      (await core.listNamespacedPod({ namespace: ns, labelSelector })).items.length === 0 &&
      (kind === 'plain' || (await mountsUnder(join(node.rootDir, 'pods'))).length === 0),
    sampleRss,
  );
  const allGoneMs = performance.now() - deleting;
  return {
    kind,
    pods: count,
    allReadyMs: Math.round(allReadyMs),
    readyMs: rounded(summarize([...readyAt.values()])),
    allGoneMs: Math.round(allGoneMs),
    cpuMs,
    driverRssMiB: { before: mib(rssBefore), peak: mib(rssPeak), after: mib(rssAfter) },
  };
}

async function pidFrom(file: string): Promise<number> {
  const pid = Number((await readFile(file, 'utf8')).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`no pid in ${file}`);
  return pid;
}

function report(rows: readonly BatchResult[]): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return table(
    [
      'pods',
      'n',
      'all Ready s',
      'Ready p50 s',
      'all gone s',
      'CPU ms driver / provider / kubelet / containerd',
      'driver RSS MiB before / peak / after',
    ],
    rows.map((r) => [
      r.kind === 'csi' ? 'with CSI volume' : 'without',
      String(r.pods),
      s(r.allReadyMs),
      s(r.readyMs.p50),
      s(r.allGoneMs),
      `${r.cpuMs.driverCpuMs} / ${r.cpuMs.providerCpuMs} / ${r.cpuMs.kubeletCpuMs} / ${r.cpuMs.containerdCpuMs}`,
      `${r.driverRssMiB.before} / ${r.driverRssMiB.peak} / ${r.driverRssMiB.after}`,
    ]),
    new Set([1, 2, 3, 4]),
  );
}

async function main(): Promise<void> {
  const skip = await e2eSkipReason();
  if (skip) {
    progress(`skipped: ${skip}`);
    return;
  }
  const count = positiveIntEnv('BENCH_E2E_PODS', 50);
  const rounds = positiveIntEnv('BENCH_E2E_ROUNDS', 1);
  const run = await startBenchRun('e2e-pods', REPO_DIR);
  progress('starting the node (control plane, containerd, kubelet, driver, file provider)');
  const node = await startE2eNode({ driverArgs: ['--log-level=info'] });
  const rows: BatchResult[] = [];
  try {
    const ns = await createNamespace(node.cluster, 'bench');
    const objects = Array.from({ length: OBJECTS }, (_, i) => `obj-${i}`);
    for (const o of objects) await writeProviderFile(node, `bench/${o}`, randomBytes(OBJECT_SIZE / 2).toString('hex'));
    await createSecretProviderClass(node.cluster, ns, CLASS, {
      provider: 'file',
      parameters: { objects: objects.map((o) => `- objectName: ${o}\n  sourcePath: bench/${o}\n`).join('') },
      secretObjects: [{ secretName: 'bench-synced', type: 'Opaque', data: [{ objectName: 'obj-0', key: 'value' }] }],
    });
    const provider = node.stack.provider?.process.pid;
    if (!provider) throw new Error('the node runs no file provider');
    const pids: Pids = {
      driver: node.stack.driver.process.pid ?? 0,
      provider,
      kubelet: await pidFrom(join(node.dir, 'kubelet.pid')),
      containerd: await pidFrom(join(node.dir, 'containerd.pid')),
    };
    // One pod of each kind first: the first container start on a node pays for things no later one does.
    progress('warm-up: one pod of each kind');
    for (const kind of ['plain', 'csi'] as const) await runBatch(node, ns, kind, 1, `warmup-${kind}`, pids);
    for (let round = 1; round <= rounds; round++) {
      for (const kind of ['plain', 'csi'] as const) {
        progress(`round ${round}/${rounds}: ${count} pods ${kind === 'csi' ? 'with' : 'without'} the CSI volume`);
        rows.push(await runBatch(node, ns, kind, count, `r${round}-${kind}`, pids));
      }
    }
  } finally {
    await node.stop();
  }
  const results = {
    ...run.finish(),
    config: {
      pods: count,
      rounds,
      objectsPerVolume: OBJECTS,
      objectSizeBytes: OBJECT_SIZE,
      provider: 'file',
      secretObjects: 1,
      node: 'one node: etcd + kube-apiserver, kube-controller-manager, containerd, kubelet (test/support/e2e-node.ts); hostNetwork busybox pods, imagePullPolicy Never',
      driverFlags:
        "the e2e node's defaults (Kubernetes mode, Secret sync on, rotation off) with --log-level=info, images' node flags",
      readiness: `pods listed every ${SAMPLE_MS} ms from the first create call; a pod counts from the first list that shows it Ready`,
      cpu: 'delta of /proc/<pid>/stat user+system time from before the first create call until every pod was Ready (10 ms ticks)',
      rss: 'driver VmRSS before the batch, the largest sample until every pod was gone, and once every pod was Ready',
    },
    batches: rows,
  };
  const files = await writeBenchResults(RESULTS_DIR, 'e2e-pods', results, true);
  process.stdout.write(
    `secrets-store-csi e2e pods benchmark  ${results.startedAt}\n` +
      `${machineLine(results)}\n` +
      `${count} pods at once per batch, ${OBJECTS} objects of ${OBJECT_SIZE} bytes and one synced Secret per CSI volume\n\n${report(rows)}\n`,
  );
  progress(`wrote ${files.join(' and ')}`);
}

runBench('e2e-pods', main);
