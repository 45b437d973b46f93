import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_PATH } from '../bin/child-process.js';
import type { KubeCluster } from '../test/support/kube-cluster.js';
import { mib, processMemory } from './proc.js';
import { benchNode, BenchProcess, processNodeFlags } from './processes.js';
import { loggedPort, metricSum, runLimited, scrape } from './rounds.js';
import { machineLine, positiveIntEnv, runBench, startBenchRun, table, writeBenchResults } from './report.js';
import type { BenchRunHeader } from './report.js';

/**
 * `npm run bench:sync`: the SecretSync controller with N SecretSyncs (default 1,000) over
 * C classes (default 10) in a few namespaces (default 5, two classes each) and two service
 * accounts per namespace: a real etcd + kube-apiserver (test/support/kube-cluster.ts), the
 * real file provider and the controller as separate processes, the controller authorised
 * only by deploy/sync-controller/rbac.yaml. Measured, for the first sync of all (the
 * controller starts with every object in place) and for one forced round (a new
 * refresh-requested-at on every class re-fetches every SecretSync at once): provider Mount
 * calls, the controller's API requests by verb, its RSS, the wall time.
 * Variants: this build; this build with --share-provider-mounts=false (one Mount per
 * SecretSync, as upstream's SSC); BENCH_BASELINE_CLI=<another checkout>/dist/bin/cli.js
 * adds that build (run without the flag).
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/sync-controller.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');
const SS = { group: 'secret-sync.x-k8s.io', version: 'v1alpha1', plural: 'secretsyncs' } as const;
const SPC = { group: 'secrets-store.csi.x-k8s.io', version: 'v1', plural: 'secretproviderclasses' } as const;
const SERVICE_ACCOUNTS = ['default', 'app'] as const;
/** The longest a phase may take before the benchmark gives up. */
const PHASE_TIMEOUT_MS = 600_000;

interface Variant {
  readonly label: string;
  readonly cli: string;
  readonly args: readonly string[];
}

interface Shape {
  readonly secretSyncs: number;
  readonly classes: number;
  readonly namespaces: number;
}

/** What one phase cost the controller. */
interface PhaseResult {
  readonly wallSeconds: number;
  readonly mountCalls: number;
  /** Reconciles answered by a Mount made for another SecretSync. */
  readonly mountsShared: number;
  readonly reconciles: Readonly<Record<string, number>>;
  /** The controller's Kubernetes API requests by HTTP method (rest_client_requests_total). */
  readonly apiRequests: Readonly<Record<string, number>>;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
}

interface VariantResult {
  readonly label: string;
  readonly args: readonly string[];
  readonly firstSync: PhaseResult;
  readonly forcedRound: PhaseResult;
}

interface SyncControllerResults extends BenchRunHeader<'sync-controller'> {
  readonly config: Shape & { readonly serviceAccountsPerNamespace: number; readonly groups: number };
  readonly results: readonly VariantResult[];
}

/** Where SecretSync i goes: namespace, class (of its namespace) and service account, spread evenly. */
function placement(i: number, shape: Shape) {
  const perNamespace = Math.max(1, Math.floor(shape.classes / shape.namespaces));
  const namespace = i % shape.namespaces;
  const cls = Math.floor(i / shape.namespaces) % perNamespace;
  const sa = SERVICE_ACCOUNTS[Math.floor(i / (shape.namespaces * perNamespace)) % SERVICE_ACCOUNTS.length] as string;
  return { namespace, cls: `class-${cls}`, sa, perNamespace };
}

/** The groups (namespace, class, service account) the SecretSyncs fall into. */
function groupCount(shape: Shape): number {
  const groups = new Set<string>();
  for (let i = 0; i < shape.secretSyncs; i++) {
    const p = placement(i, shape);
    groups.add(`${p.namespace}/${p.cls}/${p.sa}`);
  }
  return groups.size;
}

/** Namespaces with their service accounts, classes and SecretSyncs, created before the controller starts. */
async function createObjects(cluster: KubeCluster, shape: Shape): Promise<string[]> {
  const { createNamespace } = await import('../test/support/kube-cluster.js');
  const namespaces: string[] = [];
  const perNamespace = placement(0, shape).perNamespace;
  for (let n = 0; n < shape.namespaces; n++) {
    const ns = await createNamespace(cluster, 'bench-sync');
    namespaces.push(ns);
    await cluster.admin.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'app' } } });
    for (let c = 0; c < perNamespace; c++)
      await cluster.admin.custom.createNamespacedCustomObject({
        ...SPC,
        namespace: ns,
        body: {
          apiVersion: 'secrets-store.csi.x-k8s.io/v1',
          kind: 'SecretProviderClass',
          metadata: { name: `class-${c}` },
          spec: {
            provider: 'file',
            parameters: {
              objects: JSON.stringify([
                { objectName: 'password', sourcePath: `class-${c}/password` },
                { objectName: 'user', sourcePath: `class-${c}/user` },
              ]),
            },
          },
        },
      });
  }
  const indexes = Array.from({ length: shape.secretSyncs }, (_, i) => i);
  await runLimited(indexes, 16, async (i) => {
    const p = placement(i, shape);
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SS,
      namespace: namespaces[p.namespace] as string,
      body: {
        apiVersion: 'secret-sync.x-k8s.io/v1alpha1',
        kind: 'SecretSync',
        metadata: { name: `sync-${i}` },
        spec: {
          secretProviderClassName: p.cls,
          serviceAccountName: p.sa,
          secretObject: {
            data: [
              { sourcePath: 'password', targetKey: 'password' },
              { sourcePath: 'user', targetKey: 'user' },
            ],
          },
        },
      },
    });
  });
  return namespaces;
}

/** Deletes the SecretSyncs and Secrets of `namespaces` (no namespace controller runs), so the next variant's controller does not see them. */
async function deleteObjects(cluster: KubeCluster, namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    await cluster.admin.custom.deleteCollectionNamespacedCustomObject({ ...SS, namespace });
    await cluster.admin.core.deleteCollectionNamespacedSecret({ namespace });
  }
}

/** Every series of `name` by the value of `label`. */
function byLabel(text: string, name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const value = new RegExp(`${label}="([^"]*)"`).exec(line)?.[1] ?? '';
    out.set(value, (out.get(value) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

function delta(before: string, after: string, name: string, label: string): Record<string, number> {
  const b = byLabel(before, name, label);
  const out: Record<string, number> = {};
  for (const [key, n] of byLabel(after, name, label)) {
    const d = n - (b.get(key) ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

const reconciles = (text: string) => metricSum(text, 'secretsync_reconcile_total');

/** Polls the controller's metrics until `done` says so (every 250 ms); the last scrape. */
async function untilMetrics(port: number, what: string, done: (text: string) => boolean): Promise<string> {
  for (const deadline = Date.now() + PHASE_TIMEOUT_MS; Date.now() < deadline;) {
    const text = await scrape(port);
    if (done(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what}: not done within ${PHASE_TIMEOUT_MS / 1000} s`);
}

async function phase(controller: BenchProcess, before: string, after: string, startedAt: number): Promise<PhaseResult> {
  const memory = await processMemory(controller.pid);
  const metric = (name: string) => metricSum(after, name) - metricSum(before, name);
  return {
    wallSeconds: Math.round((performance.now() - startedAt) / 100) / 10,
    mountCalls: metric('secretsync_provider_mount_total'),
    mountsShared: metric('secretsync_provider_mount_shared_total'),
    reconciles: delta(before, after, 'secretsync_reconcile_total', 'result'),
    apiRequests: delta(before, after, 'rest_client_requests_total', 'method'),
    rssMiB: mib(memory.rssKiB),
    peakRssMiB: mib(memory.hwmKiB),
  };
}

/** One variant: fresh objects, the controller's first sync of all, then one forced round. */
async function runVariant(cluster: KubeCluster, variant: Variant, shape: Shape): Promise<VariantResult> {
  const { controllerKubeconfig } = await import('../test/support/sync-controller.js');
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-sync-'));
  const processes: BenchProcess[] = [];
  let namespaces: string[] = [];
  try {
    const root = join(work, 'root');
    const perNamespace = placement(0, shape).perNamespace;
    for (let c = 0; c < perNamespace; c++) {
      await mkdir(join(root, `class-${c}`), { recursive: true });
      await writeFile(join(root, `class-${c}`, 'password'), `password-${c}`);
      await writeFile(join(root, `class-${c}`, 'user'), `user-${c}`);
    }
    await mkdir(join(work, 'providers'));
    await controllerKubeconfig(cluster, join(work, 'kubeconfig'));
    process.stderr.write(`sync-controller: ${variant.label}: creating ${shape.secretSyncs} SecretSyncs\n`);
    namespaces = await createObjects(cluster, shape);
    const node = [...processNodeFlags(undefined), variant.cli];
    processes.push(
      await BenchProcess.startBinary(
        `file provider (${variant.label})`,
        benchNode().path,
        [
          ...node,
          'provider',
          'file',
          `--endpoint=unix://${join(work, 'providers', 'file.sock')}`,
          `--root=${root}`,
          `--hmac-key-file=${join(work, 'hmac.key')}`,
        ],
        /provider started/,
      ),
    );
    process.stderr.write(`sync-controller: ${variant.label}: first sync\n`);
    const startedAt = performance.now();
    const controller = await BenchProcess.startBinary(
      `sync controller (${variant.label})`,
      benchNode().path,
      [
        ...node,
        'sync-controller',
        `--provider-volume=${join(work, 'providers')}`,
        `--kubeconfig=${join(work, 'kubeconfig')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=0',
        '--rotation-poll-interval=0',
        '--token-request-audience=bench',
        ...variant.args,
      ],
      /sync controller started/,
    );
    processes.push(controller);
    const port = loggedPort(controller, 'metricsPort');
    const synced = await untilMetrics(
      port,
      'first sync',
      (text) => metricSum(text, 'secretsync_reconcile_total', { result: 'synced' }) >= shape.secretSyncs,
    );
    const firstSync = await phase(controller, '', synced, startedAt);

    process.stderr.write(`sync-controller: ${variant.label}: forced round\n`);
    const before = await scrape(port);
    const roundAt = performance.now();
    const requestedAt = new Date().toISOString();
    for (const namespace of namespaces)
      for (let c = 0; c < perNamespace; c++)
        await cluster.admin.custom.patchNamespacedCustomObject({
          ...SPC,
          namespace,
          name: `class-${c}`,
          body: [
            {
              op: 'add',
              path: '/metadata/annotations',
              value: { 'secrets-store.csi.k8s.io/refresh-requested-at': requestedAt },
            },
          ],
        });
    const round = await untilMetrics(
      port,
      'forced round',
      (text) => reconciles(text) >= reconciles(before) + shape.secretSyncs,
    );
    const forcedRound = await phase(controller, before, round, roundAt);
    return { label: variant.label, args: variant.args, firstSync, forcedRound };
  } finally {
    for (const p of processes.reverse()) await p.stop();
    await deleteObjects(cluster, namespaces).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

const requests = (r: Readonly<Record<string, number>>) =>
  Object.entries(r)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([verb, n]) => `${verb} ${n}`)
    .join(', ');

async function main(): Promise<void> {
  const { kubernetesUnavailable } = await import('./kube-env.js');
  const unavailable = kubernetesUnavailable();
  if (unavailable) throw new Error(`needs a kube-apiserver: ${unavailable}`);
  const { startKubeCluster } = await import('../test/support/kube-cluster.js');
  const { installSyncControllerManifests } = await import('../test/support/sync-controller.js');
  const run = await startBenchRun('sync-controller', REPO_DIR);
  const shape: Shape = {
    secretSyncs: positiveIntEnv('BENCH_SYNC_SECRETSYNCS', 1000),
    classes: positiveIntEnv('BENCH_SYNC_CLASSES', 10),
    namespaces: positiveIntEnv('BENCH_SYNC_NAMESPACES', 5),
  };
  const baseline = process.env['BENCH_BASELINE_CLI'];
  const variants: Variant[] = [
    ...(baseline ? [{ label: `baseline ${baseline}`, cli: baseline, args: [] }] : []),
    { label: 'one Mount per SecretSync', cli: CLI_PATH, args: ['--share-provider-mounts=false'] },
    { label: 'this build', cli: CLI_PATH, args: [] },
  ];
  const cluster = await startKubeCluster();
  const results: VariantResult[] = [];
  try {
    await installSyncControllerManifests(cluster, REPO_DIR);
    for (const v of variants) results.push(await runVariant(cluster, v, shape));
  } finally {
    await cluster.stop();
  }
  const out: SyncControllerResults = {
    ...run.finish(),
    config: { ...shape, serviceAccountsPerNamespace: SERVICE_ACCOUNTS.length, groups: groupCount(shape) },
    results,
  };
  const written = await writeBenchResults(RESULTS_DIR, 'sync-controller', out, !baseline);
  const rows = results.flatMap((r) =>
    (
      [
        ['first sync', r.firstSync],
        ['forced round', r.forcedRound],
      ] as const
    ).map(([what, p]) => [
      r.label,
      what,
      String(p.mountCalls),
      String(p.mountsShared),
      requests(p.apiRequests),
      String(p.rssMiB),
      String(p.peakRssMiB),
      p.wallSeconds.toFixed(1),
    ]),
  );
  process.stdout.write(
    `${machineLine(out)}\n${shape.secretSyncs} SecretSyncs, ${shape.classes} classes in ${shape.namespaces} namespaces, ${SERVICE_ACCOUNTS.length} service accounts each: ${out.config.groups} groups (namespace, class, service account)\n` +
      `${table(['build', 'phase', 'Mount calls', 'shared', 'API requests by verb', 'RSS MiB', 'peak MiB', 'wall s'], rows, new Set([2, 3, 5, 6, 7]))}\n` +
      `results: ${written.join(', ')}\n`,
  );
}

runBench('sync-controller', main);
