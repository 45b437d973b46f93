import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type Child } from '../bin/child-process.js';
import { EVENT_LOOP_SAMPLE_MS } from '../lib/process-registry.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from '../bin/csi-client.js';
import type { BulkShape } from './bulk-provider.js';
import { machineInfo, unmountAllUnder } from './proc.js';
import { benchNode, chooseMountMode, startDriver, type BenchProcess } from './processes.js';
import { progressLine, removeWorkDir } from './run-control.js';
import { runBench, table, writeJson } from './report.js';

/**
 * The stall benchmark (part of `npm run bench`): while the driver publishes a 4 MiB
 * response of (a) ~1,000 deeply nested paths and (b) ~250,000 tiny files, first publish
 * and unchanged republish, how long is its event loop held at once? Two views: the
 * driver's own `nodejs_eventloop_lag_max_seconds` over the publish less its sampling
 * interval (the driver resets it at every scrape), and the latency of Probe calls sent
 * back to back meanwhile, which is what kubelet and every other pod's publish feel.
 * Target: no stall over 100 ms.
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));
const BULK_PROVIDER = fileURLToPath(new URL('./bulk-provider.js', import.meta.url));
const TARGET_STALL_MS = 100;

interface StallRow {
  shape: BulkShape;
  call: 'first publish' | 'unchanged republish';
  publishMs: number;
  /** Longest event-loop delay the driver measured during the call. */
  loopStallMs: number;
  /** Slowest Probe answered during the call, and how many were sent. */
  probeMaxMs: number;
  probes: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * The longest stall since the previous scrape: the driver's lag max is the longest interval
 * of its EVENT_LOOP_SAMPLE_MS sampling timer, so the stall is what exceeds the interval.
 */
async function scrapeLagMaxMs(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('the driver exports no nodejs_eventloop_lag_max_seconds');
  // No sample since the last scrape reads 0: no stall seen.
  return Math.max(0, Number(m[1]) * 1000 - EVENT_LOOP_SAMPLE_MS);
}

/** Sends Probe calls one after another until `done` settles; returns their latencies. */
async function probeWhile(client: CsiClient, done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done
    .finally(() => {
      finished = true;
    })
    .catch(() => undefined);
  const latencies: number[] = [];
  while (!finished) {
    const start = performance.now();
    await client.probe();
    latencies.push(performance.now() - start);
  }
  return latencies;
}

async function measure(
  client: CsiClient,
  port: number,
  shape: BulkShape,
  call: StallRow['call'],
  publish: () => Promise<void>,
): Promise<StallRow> {
  await scrapeLagMaxMs(port); // resets the driver's histogram
  const start = performance.now();
  const published = publish();
  const probes = await probeWhile(client, published);
  await published;
  const publishMs = performance.now() - start;
  return {
    shape,
    call,
    publishMs: round1(publishMs),
    loopStallMs: round1(await scrapeLagMaxMs(port)),
    probeMaxMs: round1(Math.max(...probes)),
    probes: probes.length,
  };
}

function spcYaml(): string {
  return 'apiVersion: secrets-store.csi.x-k8s.io/v1\nkind: SecretProviderClass\nmetadata:\n  name: bulk\n  namespace: default\nspec:\n  provider: bulk\n  parameters:\n    objects: ""\n';
}

async function runShape(work: string, shape: BulkShape, mountMode: 'tmpfs' | 'dir'): Promise<StallRow[]> {
  const providers = join(work, 'providers');
  const spcDir = join(work, `spc-${shape}`);
  await mkdir(providers, { recursive: true });
  await mkdir(spcDir, { recursive: true });
  await writeFile(join(spcDir, 'bulk.yaml'), spcYaml());
  let provider: Child | undefined;
  let driver: BenchProcess | undefined;
  const client = new CsiClient(join(work, `csi-${shape}.sock`));
  const target = join(work, 'pods', shape, 'volume');
  try {
    provider = await startProcess(
      benchNode().path,
      [BULK_PROVIDER, join(providers, 'bulk.sock'), shape],
      /bulk provider started/,
    );
    driver = await startDriver(work, join(work, `csi-${shape}.sock`), spcDir, mountMode, process.env['BENCH_CPU_PROF']);
    const port = Number(/"metricsPort":(\d+)/.exec(driver.stderrTail(50))?.[1]);
    const request = inlinePublishRequest(
      `vol-${shape}`,
      target,
      inlineVolumeContext(
        { name: shape, namespace: 'default', uid: `uid-${shape}`, serviceAccountName: 'default' },
        'bulk',
      ),
    );
    const rows = [await measure(client, port, shape, 'first publish', () => client.publish(request, 120_000))];
    rows.push(await measure(client, port, shape, 'unchanged republish', () => client.publish(request, 120_000)));
    await client.unpublish(`vol-${shape}`, target, 120_000);
    return rows;
  } catch (err) {
    throw new Error(`${shape}: ${(err as Error).message}${driver ? `\ndriver log:\n${driver.stderrTail()}` : ''}`, {
      cause: err,
    });
  } finally {
    client.close();
    await driver?.stop();
    await provider?.stop();
    await unmountAllUnder(work);
  }
}

async function main(): Promise<void> {
  const { mode } = chooseMountMode();
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-stall-'));
  try {
    const rows: StallRow[] = [];
    for (const shape of ['nested', 'tiny'] as const) {
      process.stderr.write(`bench: stall case ${shape}\n`);
      rows.push(...(await runShape(work, shape, mode)));
    }
    const worst = Math.max(...rows.map((r) => Math.max(r.loopStallMs, r.probeMaxMs)));
    const status = worst <= TARGET_STALL_MS ? 'ok' : 'MISSED';
    process.stdout.write(`\nEvent-loop stalls while publishing a 4 MiB response (mount mode ${mode})\n`);
    process.stdout.write(
      table(
        ['shape', 'call', 'publish ms', 'longest loop stall ms', 'slowest Probe ms', 'Probes'],
        rows.map((r) => [
          r.shape,
          r.call,
          String(r.publishMs),
          String(r.loopStallMs),
          String(r.probeMaxMs),
          String(r.probes),
        ]),
        new Set([2, 3, 4, 5]),
      ),
    );
    process.stdout.write(`\ntarget: no stall over ${TARGET_STALL_MS} ms: ${status} (worst ${worst} ms)\n`);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const results = {
      kind: 'stall',
      machine: await machineInfo(REPO_DIR),
      mountMode: mode,
      targetStallMs: TARGET_STALL_MS,
      status,
      worstMs: worst,
      rows,
    };
    await writeJson(join(REPO_DIR, 'bench', 'results', `stall-${stamp}.json`), results);
    await writeJson(join(REPO_DIR, 'bench', 'results', 'stall-latest.json'), results);
  } finally {
    await removeWorkDir(work, progressLine('stall'));
  }
}

runBench('stall', main);
