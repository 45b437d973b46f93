import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient } from '../bin/csi-client.js';
import { resolveEndpoint } from '../driver/k8s/client/connect.js';
import { KubeApi } from '../driver/k8s/client/kube-api.js';
import { USED_SECRET_LABEL } from '../driver/k8s/constants.js';
import { corePath, secretProviderClassPath } from '../driver/k8s/resource-paths.js';
import { delta } from './stats.js';
import type { KubeCluster } from '../test/support/kube-cluster.js';
import {
  apiserverWatchCounters,
  clusterTargets,
  driverCounters,
  namespacesFor,
  objectSteps,
  OBJECTS_PER_NAMESPACE,
  otherNamespace,
  stepPlan,
  stepsTable,
  simSteps,
  simTable,
  simTargets,
  summarize,
  type ClusterResults,
  type SimStep,
  type ClusterStep,
  type DriverCounters,
  type DriverStep,
  type OtherObject,
} from './cluster-report.js';
import type { SimulatedNode } from './cluster-sim.js';
import { measureSimStep, type SimEnv } from './cluster-sim-step.js';
import { objectNames, objectsParameter, writeObjects } from './fixtures.js';
import {
  apiserverMetrics,
  createBenchPods,
  createIgnoringConflict,
  createCsiDriver,
  createSecretProviderClass,
  kubernetesUnavailable,
} from './kube-env.js';
import { mib, processCpuMs, processMemory } from './proc.js';
import { BenchProcess, benchNodeFlags, processNodeFlags, startFileProvider, usesImageNodeFlags } from './processes.js';
import { machineLine, nodeFlagsText, positiveIntEnv, runBench, startBenchRun, writeBenchResults } from './report.js';
import { loggedPort, nextRound, runLimited, scrape, Volumes, VOLUME_NAME, type BenchPod } from './rounds.js';
import { Interrupt, progressLine, removeWorkDir } from './run-control.js';

/**
 * `npm run bench:cluster` (also part of `npm run bench`): what each node's driver costs as
 * the cluster around it grows (issue 30). One real etcd + kube-apiserver; K real drivers in
 * Kubernetes mode, each its own node with a few pods of its own published through its CSI
 * socket as kubelet would; then N SecretProviderClasses, used Secrets and pods of other
 * nodes, N growing step by step. See bench/README.md ("Cluster benchmark").
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/cluster.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

const DEFAULT_NODES = 20;
const DEFAULT_PODS_PER_NODE = 3;
const DEFAULT_STEPS = [100, 1000, 10_000];
const DEFAULT_SIM_NODES = [250, 1000, 2000];
const OBJECTS_PER_VOLUME = 3;
const OBJECT_SIZE = 256;
const POLL_INTERVAL = '2s';
/** Requests in flight while creating other nodes' objects (the admin client's keep-alive pool holds 16). */
const CREATE_CONCURRENCY = 16;
/** Drivers started at once. */
const START_CONCURRENCY = 4;
/** Watch traffic has settled when no driver received an event (bookmarks aside) for this long. */
const QUIET_MS = 3000;
const SETTLE_POLL_MS = 250;
const SETTLE_TIMEOUT_MS = 300_000;
const ROUND_TIMEOUT_MS = 60_000;
const SPC_NAME = 'app';
const CREDS_SECRET = 'creds';
const CREDS = { username: 'bench', password: 'not-a-real-password' };

const interrupt = new Interrupt();
const checkInterrupted = (): void => interrupt.check();

const progress = progressLine('cluster');

/** One benchmark node: its driver, its namespace and the volumes published on it. */
interface BenchNode {
  readonly name: string;
  readonly namespace: string;
  readonly driver: BenchProcess;
  readonly metricsPort: number;
  readonly client: CsiClient;
  readonly volumes: Volumes;
}

interface Ctx {
  readonly cluster: KubeCluster;
  readonly ca: Buffer;
  /** The admin's client with keep-alive connections (the test client makes a TLS handshake per call). */
  readonly admin: KubeApi;
  readonly apiserverPid: number;
  readonly etcdPid: number;
  /** WATCH requests the apiserver had open before any driver started: its own informers'. */
  readonly ownWatchRequests: number;
  readonly nodes: BenchNode[];
  readonly checks: Record<string, boolean>;
}

function check(ctx: Pick<Ctx, 'checks'>, name: string, ok: boolean, detail: string): void {
  ctx.checks[name] = (ctx.checks[name] ?? true) && ok;
  if (!ok) progress(`CHECK FAILED ${name}: ${detail}`);
}

async function countersOf(nodes: readonly BenchNode[]): Promise<DriverCounters[]> {
  return Promise.all(nodes.map(async (n) => driverCounters(await scrape(n.metricsPort))));
}

const eventTotal = (c: DriverCounters): number => Object.values(c.watchEvents).reduce((a, b) => a + b, 0);

/**
 * Waits until no driver has received a watch event (bookmarks aside) for QUIET_MS: the
 * watch traffic a change caused has been delivered. Resolves with the last counters.
 */
async function settle(nodes: readonly BenchNode[]): Promise<{ counters: DriverCounters[]; seconds: number }> {
  const t0 = Date.now();
  let counters = await countersOf(nodes);
  let quietSince = Date.now();
  for (;;) {
    checkInterrupted();
    if (Date.now() - quietSince >= QUIET_MS) return { counters, seconds: (Date.now() - t0) / 1000 };
    if (Date.now() - t0 > SETTLE_TIMEOUT_MS)
      throw new Error(`the drivers' watch traffic did not settle within ${SETTLE_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    const next = await countersOf(nodes);
    if (next.some((c, i) => eventTotal(c) !== eventTotal(counters[i]!))) quietSince = Date.now();
    counters = next;
  }
}

/** The objects of other nodes one index stands for: a class, a used Secret, and a pod on another node using both. */
async function createOtherObjects(ctx: Ctx, o: OtherObject, objectsYaml: string): Promise<void> {
  const { admin } = ctx;
  await createIgnoringConflict(admin, secretProviderClassPath(o.namespace), {
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    metadata: { name: `spc-${o.index}` },
    spec: {
      provider: 'file',
      parameters: { objects: objectsYaml },
      secretObjects: [
        { secretName: `synced-${o.index}`, type: 'Opaque', data: [{ objectName: 'secret-000', key: 'a' }] },
      ],
    },
  });
  await createIgnoringConflict(admin, corePath('secrets', o.namespace), {
    metadata: { name: `used-${o.index}`, labels: { [USED_SECRET_LABEL]: 'true' } },
    stringData: { username: `user-${o.index}`, password: randomBytes(24).toString('base64') },
  });
  await createIgnoringConflict(admin, corePath('pods', o.namespace), {
    metadata: { name: `pod-${o.index}` },
    spec: {
      nodeName: o.nodeName,
      serviceAccountName: 'default',
      containers: [{ name: 'app', image: 'app' }],
      volumes: [
        {
          name: VOLUME_NAME,
          csi: {
            driver: 'secrets-store.csi.k8s.io',
            readOnly: true,
            volumeAttributes: { secretProviderClass: `spc-${o.index}` },
            nodePublishSecretRef: { name: `used-${o.index}` },
          },
        },
      ],
    },
  });
}

/** Adds objects of other nodes until the cluster holds `total` of each kind. */
async function growCluster(ctx: Ctx, existing: number, total: number, objectsYaml: string): Promise<void> {
  const { objects, newNamespaces } = stepPlan(existing, total);
  await runLimited(
    newNamespaces,
    CREATE_CONCURRENCY,
    async (namespace) => {
      await createIgnoringConflict(ctx.admin, corePath('namespaces'), { metadata: { name: namespace } });
      await createIgnoringConflict(ctx.admin, corePath('serviceaccounts', namespace), {
        metadata: { name: 'default' },
      });
    },
    interrupt.signal,
  );
  await runLimited(objects, CREATE_CONCURRENCY, (o) => createOtherObjects(ctx, o, objectsYaml), interrupt.signal);
}

/**
 * Touches one Secret (an annotation: its data stays), waits for the watch traffic to
 * settle, and returns how many drivers received a Secret event meanwhile.
 */
async function secretChangeReach(ctx: Ctx, namespace: string, name: string, stamp: string): Promise<number> {
  const before = await countersOf(ctx.nodes);
  await ctx.admin.mergePatch(corePath('secrets', namespace, name), {
    metadata: { annotations: { 'bench.secrets-store-csi/touched': stamp } },
  });
  const { counters: after } = await settle(ctx.nodes);
  return after.filter((c, i) => {
    const d = delta(before[i]!.watchEvents, c.watchEvents);
    return Object.entries(d).some(([key, n]) => key.startsWith('secrets/') && n > 0);
  }).length;
}

/** API requests each driver made between two consecutive `rotation round done` lines (one round, nothing changed). */
async function requestsPerRound(ctx: Ctx): Promise<number[]> {
  return Promise.all(
    ctx.nodes.map(async (n) => {
      const first = await nextRound(n.driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal }).round;
      // Taken at once: the next round is at least a second away.
      const before = driverCounters(await scrape(n.metricsPort)).apiRequests;
      const second = await nextRound(n.driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal }).round;
      const after = driverCounters(await scrape(n.metricsPort)).apiRequests;
      for (const round of [first, second])
        check(
          ctx,
          'rounds-without-failures-or-changes',
          round.failed === 0 && round.changed === 0,
          `${n.name}: round ${JSON.stringify(round)}`,
        );
      return after - before;
    }),
  );
}

async function measureStep(ctx: Ctx, existing: number, total: number, objectsYaml: string): Promise<ClusterStep> {
  checkInterrupted();
  const { nodes } = ctx;
  const [before, apiBefore, cpuBefore, apiCpuBefore, etcdCpuBefore] = await Promise.all([
    countersOf(nodes),
    apiserverMetrics(ctx.cluster, ctx.ca).then(apiserverWatchCounters),
    Promise.all(nodes.map((n) => processCpuMs(n.driver.pid))),
    processCpuMs(ctx.apiserverPid),
    processCpuMs(ctx.etcdPid),
  ]);
  progress(`step ${total}: creating ${total - existing} each of classes, used Secrets and pods of other nodes`);
  const t0 = performance.now();
  await growCluster(ctx, existing, total, objectsYaml);
  const createSeconds = Math.round((performance.now() - t0) / 100) / 10;
  const { counters: after, seconds: settleSeconds } = await settle(nodes);
  const [cpuAfter, apiCpuAfter, etcdCpuAfter, rss, apiserverRss, apiMetrics] = await Promise.all([
    Promise.all(nodes.map((n) => processCpuMs(n.driver.pid))),
    processCpuMs(ctx.apiserverPid),
    processCpuMs(ctx.etcdPid),
    Promise.all(nodes.map((n) => processMemory(n.driver.pid))),
    processMemory(ctx.apiserverPid),
    apiserverMetrics(ctx.cluster, ctx.ca).then(apiserverWatchCounters),
  ]);
  progress(`step ${total}: created in ${createSeconds} s, watch traffic settled ${settleSeconds.toFixed(1)} s later`);
  const perRound = await requestsPerRound(ctx);
  const stamp = String(total);
  const otherSecretChangeReached = await secretChangeReach(ctx, otherNamespace(0), 'used-0', stamp);
  const ownSecretChangeReached = await secretChangeReach(ctx, nodes[0]!.namespace, CREDS_SECRET, stamp);
  const drivers: DriverStep[] = nodes.map((n, i) => ({
    node: n.name,
    rssMiB: mib(rss[i]!.rssKiB),
    watchesOpen: after[i]!.watchesOpen,
    watches: Object.values(after[i]!.watchesOpen).reduce((a, b) => a + b, 0),
    eventsReceived: delta(before[i]!.watchEvents, after[i]!.watchEvents),
    bytesReceived: delta(before[i]!.watchBytes, after[i]!.watchBytes),
    cpuMs: cpuAfter[i]! - cpuBefore[i]!,
    apiRequestsPerRound: perRound[i]!,
  }));
  for (const n of nodes) check(ctx, 'drivers-running', n.driver.running, `${n.name} exited:\n${n.driver.stderrTail()}`);
  const step: ClusterStep = {
    objects: total,
    namespaces: namespacesFor(total),
    createSeconds,
    settleSeconds: Math.round(settleSeconds * 10) / 10,
    drivers,
    apiserver: {
      driverWatchRequests: apiMetrics.watchRequests - ctx.ownWatchRequests,
      eventsSent: apiMetrics.eventsSent - apiBefore.eventsSent,
      bytesSent: apiMetrics.bytesSent - apiBefore.bytesSent,
      cpuMs: apiCpuAfter - apiCpuBefore,
      etcdCpuMs: etcdCpuAfter - etcdCpuBefore,
      rssMiB: mib(apiserverRss.rssKiB),
    },
    otherSecretChangeReached,
    ownSecretChangeReached,
  };
  const s = summarize(step);
  progress(
    `step ${total}: driver RSS ${s.rssMiB.median.toFixed(1)} MiB (max ${s.rssMiB.max.toFixed(1)}), watches ${s.watches.max}, events received ${s.eventsReceived.median} (max ${s.eventsReceived.max}), ${s.kibReceived.median} KiB, API requests per round ${s.apiRequestsPerRound.max}, apiserver CPU ${step.apiserver.cpuMs} ms, a Secret change reached ${otherSecretChangeReached} (another node's) and ${ownSecretChangeReached} (node 0's) of ${nodes.length} drivers`,
  );
  return step;
}

/** The apiserver's own WATCH requests before any driver runs: the same count in two reads a second apart. */
async function settledOwnWatches(ctx: Pick<Ctx, 'cluster' | 'ca'>): Promise<number> {
  let last = -1;
  for (let i = 0; i < 30; i++) {
    const n = apiserverWatchCounters(await apiserverMetrics(ctx.cluster, ctx.ca)).watchRequests;
    if (n === last) return n;
    last = n;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return last;
}

/** The arguments of benchmark node `name`'s driver: Kubernetes mode with rotation and Secret sync, as deployed. */
function driverArgs(work: string, name: string, socket: string, kubeconfig: string): string[] {
  return [
    'driver',
    `--endpoint=unix://${socket}`,
    `--nodeid=${name}`,
    `--provider-volume=${join(work, 'providers')}`,
    '--additional-provider-volume-paths=',
    '--mount-mode=tmpfs',
    '--metrics-addr=127.0.0.1:0',
    `--kubeconfig=${kubeconfig}`,
    '--enable-secret-rotation',
    `--rotation-poll-interval=${POLL_INTERVAL}`,
    '--enable-secret-sync',
  ];
}

/**
 * Node `i`: its namespace (class, nodePublishSecretRef Secret, pods) and its driver, added
 * to `nodes` (cleanup unpublishes what it published, also after a failure); then its pods'
 * volumes published.
 */
async function startNode(
  ctx: Omit<Ctx, 'nodes'>,
  work: string,
  i: number,
  podsPerNode: number,
  classSpec: Record<string, unknown>,
  processes: BenchProcess[],
  nodes: BenchNode[],
): Promise<void> {
  const { createNamespace } = await import('../test/support/kube-cluster.js');
  const name = `bench-node-${i}`;
  const namespace = await createNamespace(ctx.cluster, `node-${i}`);
  await createSecretProviderClass(ctx.cluster, namespace, SPC_NAME, classSpec);
  await ctx.admin.create(corePath('secrets', namespace), {
    metadata: { name: CREDS_SECRET, labels: { [USED_SECRET_LABEL]: 'true' } },
    stringData: CREDS,
  });
  const pods = await createBenchPods(ctx.cluster, namespace, {
    count: podsPerNode,
    nodeName: name,
    spcName: SPC_NAME,
    volumeName: VOLUME_NAME,
    prefix: 'app',
    nodePublishSecretRef: CREDS_SECRET,
  });
  const socket = join(work, `csi-${i}.sock`);
  const driver = await BenchProcess.start(
    `driver ${name}`,
    driverArgs(work, name, socket, ctx.cluster.driverKubeconfig),
    /driver started/,
    processNodeFlags(undefined),
  );
  processes.push(driver);
  const client = new CsiClient(socket);
  const volumes = new Volumes(client, join(work, `kubelet-${i}`), SPC_NAME, 4, interrupt.signal);
  const node: BenchNode = { name, namespace, driver, metricsPort: loggedPort(driver, 'metricsPort'), client, volumes };
  nodes.push(node);
  if (!(await client.probe())) throw new Error(`${name}: driver Probe: not ready`);
  // As kubelet: the pod's nodePublishSecretRef Secret goes with the request.
  const benchPods: BenchPod[] = pods.map((p) => ({ ...p, secrets: CREDS }));
  await volumes.publish(benchPods);
}

async function main(): Promise<void> {
  const run = await startBenchRun('cluster', REPO_DIR);
  const unavailable = kubernetesUnavailable();
  if (unavailable) {
    progress(`skipped: ${unavailable}`);
    return;
  }
  const nodeCount = positiveIntEnv('BENCH_CLUSTER_NODES', DEFAULT_NODES);
  const podsPerNode = positiveIntEnv('BENCH_CLUSTER_PODS', DEFAULT_PODS_PER_NODE);
  const steps = objectSteps(process.env['BENCH_CLUSTER_OBJECTS'], DEFAULT_STEPS);
  const simNodeSteps = simSteps(process.env['BENCH_CLUSTER_SIM_NODES'], DEFAULT_SIM_NODES);
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-cluster-'));
  const processes: BenchProcess[] = [];
  const nodes: BenchNode[] = [];
  const checks: Record<string, boolean> = {};
  const results: ClusterStep[] = [];
  const simulation: SimStep[] = [];
  const sims: SimulatedNode[] = [];
  interrupt.listen();
  let cluster: KubeCluster | undefined;
  let admin: KubeApi | undefined;
  let ownWatches: number | undefined;
  try {
    progress(
      `working in ${work}: ${nodeCount} nodes × ${podsPerNode} pods, steps ${steps.join(', ')}, simulated nodes ${simNodeSteps.join(', ') || 'none'}`,
    );
    const providerRoot = join(work, 'provider-root');
    const sources = await writeObjects(providerRoot, OBJECTS_PER_VOLUME, OBJECT_SIZE);
    const objectsYaml = objectsParameter(sources);
    await mkdir(join(work, 'providers'), { recursive: true });
    processes.push(await startFileProvider(work, providerRoot));
    progress('starting etcd and kube-apiserver (test/peers/kube/start-cluster.sh)');
    const { startKubeCluster } = await import('../test/support/kube-cluster.js');
    // /debug/pprof: the simulation has the apiserver collect garbage before reading its Go memory.
    if (simNodeSteps.length > 0) process.env['KUBE_APISERVER_PROFILING'] = 'true';
    cluster = await startKubeCluster();
    admin = new KubeApi(resolveEndpoint(join(cluster.dir, 'kubeconfig'), {}));
    const pidOf = async (file: string) => Number((await readFile(join(cluster!.dir, file), 'utf8')).trim());
    const base = {
      cluster,
      ca: await readFile(cluster.caFile),
      admin,
      apiserverPid: await pidOf('kube-apiserver.pid'),
      etcdPid: await pidOf('etcd.pid'),
      ownWatchRequests: 0,
      checks,
    };
    await createCsiDriver(cluster);
    // The apiserver's own loopback informers: started with it, they may still be opening their watches.
    const ownWatchRequests = await settledOwnWatches(base);
    const classSpec = {
      provider: 'file',
      parameters: { objects: objectsYaml },
      secretObjects: [
        {
          secretName: `${SPC_NAME}-synced`,
          type: 'Opaque',
          data: objectNames(sources).map((objectName) => ({ objectName, key: objectName })),
        },
      ],
    };
    progress(`starting ${nodeCount} drivers and publishing their pods' volumes`);
    await runLimited(
      Array.from({ length: nodeCount }, (_, i) => i),
      START_CONCURRENCY,
      (i) => startNode(base, work, i, podsPerNode, classSpec, processes, nodes),
      interrupt.signal,
    );
    nodes.sort((a, b) => Number(a.name.split('-').pop()) - Number(b.name.split('-').pop()));
    ownWatches = ownWatchRequests;
    const ctx: Ctx = { ...base, ownWatchRequests, nodes };
    for (const n of nodes) {
      const synced = await admin.get(corePath('secrets', n.namespace, `${SPC_NAME}-synced`)).then(
        () => true,
        () => false,
      );
      check(ctx, 'publish-synced-secret', synced, `${n.name}: no ${SPC_NAME}-synced Secret in ${n.namespace}`);
    }
    // Every driver rotates its own volumes before anything else happens.
    await Promise.all(
      nodes.map(async (n) => {
        const round = await nextRound(n.driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal }).round;
        check(ctx, 'rounds-see-own-volumes', round.volumes === podsPerNode, `${n.name}: ${JSON.stringify(round)}`);
      }),
    );
    let existing = 0;
    for (const total of steps) {
      results.push(await measureStep(ctx, existing, total, objectsYaml));
      existing = total;
    }
    const otherNamespaces = namespacesFor(existing);
    const simEnv: SimEnv = {
      cluster,
      ca: ctx.ca,
      admin,
      apiserverPid: ctx.apiserverPid,
      ownWatchRequests,
      realDrivers: nodes.length,
      managedSecret: { namespace: nodes[0]!.namespace, name: `${SPC_NAME}-synced` },
      signal: interrupt.signal,
      progress,
      check: (name, ok, detail) => check(ctx, name, ok, detail),
    };
    for (const count of simNodeSteps) {
      checkInterrupted();
      simulation.push(await measureSimStep(simEnv, sims, count, otherNamespaces));
    }
  } finally {
    await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
    await Promise.all(
      nodes.map((n) =>
        n.volumes.unpublishAll().catch((err: unknown) => {
          progress(`cleanup: ${n.name}: unpublish failed: ${(err as Error).message.split('\n')[0]}`);
        }),
      ),
    );
    for (const n of nodes) n.client.close();
    for (const p of processes.reverse()) await p.stop().catch(() => undefined);
    admin?.close();
    await cluster?.stop().catch(() => undefined);
    await removeWorkDir(work, progress);
    interrupt.release();
  }

  const summary = results.map(summarize);
  const out: ClusterResults = {
    ...run.finish(),
    config: {
      nodes: nodeCount,
      podsPerNode,
      steps,
      objectsPerNamespace: OBJECTS_PER_NAMESPACE,
      apiserverOwnWatchRequests: ownWatches ?? null,
      objectsPerVolume: OBJECTS_PER_VOLUME,
      objectSizeBytes: OBJECT_SIZE,
      nodeFlags: benchNodeFlags(),
      driverFlags: driverArgs('<work>', '<node>', '<socket>', '<cluster>').slice(1),
      objects:
        "each step adds, up to `objects` of each kind, SecretProviderClasses, Secrets labelled used=true and pods (on 500 other node names, each with a CSI volume of its namespace's class and Secret), 10 of each per namespace; every benchmark node has its own namespace with one class, one used Secret (its pods' nodePublishSecretRef) and `podsPerNode` pods, whose volumes are published through the driver's CSI socket",
      eventsAndBytes:
        "delta of the driver's kube_watch_events_total (BOOKMARK left out) and kube_watch_bytes_total while the step's objects were created, until no driver received an event for 3 s",
      watches: "the driver's kube_watches_open after the step",
      apiRequestsPerRound:
        "delta of the driver's rest_client_requests_total between two consecutive 'rotation round done' lines (nothing changed)",
      apiserver:
        'apiserver_longrunning_requests{verb="WATCH"} after the step less those open before any driver started (its own informers\'); deltas of apiserver_watch_events_total and apiserver_watch_events_sizes_sum over the step; CPU of kube-apiserver and etcd from /proc/<pid>/stat over the step',
      simulatedNodes: simNodeSteps,
      simulation:
        "after the last step, simulated nodes (bench/cluster-sim.ts: the driver's API client and watch classes over its watch specs, no CSI socket) are added up to each count, node i with volumes in other namespace i mod namespaces; per count: the apiserver's WATCH requests (less its own), RSS and CPU over 10 s with nothing changing; who receives a used Secret annotated and a class created in simulated node 0's namespace, and 100 classes created in a new namespace (users: the nodes watching that namespace; reached: nodes that received any event of the kind until none came for 1 s; events sent: apiserver_watch_events_total delta); then the same class change and 100 new classes with upstream v1.6.1's cluster-wide class and managed-Secret watches opened on every simulated node from the current resourceVersion (no initial list)",
      secretChange:
        "drivers whose Secret watch events grew after an annotation was added to one used Secret of another node's namespace, and to node 0's own nodePublishSecretRef Secret",
    },
    steps: results,
    summary,
    simulation,
    targets: [...clusterTargets(summary, 1), ...simTargets(simulation)],
    checks,
  };
  const files = await writeBenchResults(RESULTS_DIR, 'cluster', out, usesImageNodeFlags());
  process.stdout.write(`${formatReport(out)}\n`);
  progress(`wrote ${files.join(' and ')}`);
}

function formatReport(r: ClusterResults): string {
  const failed = Object.entries(r.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  return [
    `secrets-store-csi cluster benchmark  ${r.startedAt}`,
    machineLine(r),
    `${String(r.config['nodes'])} drivers in Kubernetes mode (rotation every ${POLL_INTERVAL}, Secret sync), ${String(r.config['podsPerNode'])} pods each, one real kube-apiserver; node flags: ${nodeFlagsText(r.config['nodeFlags'])}`,
    "per-driver columns: median (max) over the drivers; events, KiB and driver CPU: while the step's objects were created",
    '',
    stepsTable(r.summary),
    '',
    ...(r.simulation.length > 0
      ? [
          'simulated nodes (bench/cluster-sim.ts) beside the drivers; changes: "reached of users: events the apiserver sent"',
          simTable(r.simulation),
          '',
        ]
      : []),
    ...r.targets.map((t) => `target ${t.description}: ${t.status} (${t.detail})`),
    failed.length ? `CHECKS FAILED: ${failed.join(', ')}` : `checks: ${Object.keys(r.checks).join(', ')} passed`,
  ].join('\n');
}

runBench('cluster', main);
