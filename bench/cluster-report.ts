import { median } from './stats.js';

import { table, type BenchRunHeader } from './report.js';

/**
 * The cluster benchmark's decisions and report (bench/cluster.ts does the I/O): which
 * objects each step adds, what a driver's /metrics says of its watches and requests, the
 * summary of K drivers per step, the issue-30 targets, and the printed table.
 */

/** Objects of other nodes put in one namespace (one SecretProviderClass, used Secret and pod of each index). */
export const OBJECTS_PER_NAMESPACE = 10;

/** BENCH_CLUSTER_OBJECTS: increasing step sizes, comma-separated ("100,1000,10000"). */
export function objectSteps(raw: string | undefined, fallback: readonly number[]): number[] {
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const steps = raw.split(',').map((p) => Number(p.trim()));
  const increasing = steps.every((n, i) => i === 0 || n > steps[i - 1]!);
  if (steps.some((n) => !Number.isSafeInteger(n) || n <= 0) || !increasing)
    throw new Error(
      `BENCH_CLUSTER_OBJECTS must be increasing positive integers separated by commas ("100,1000,10000"), got "${raw}"`,
    );
  return steps;
}

/** One object of another node: the i-th SecretProviderClass, used Secret and pod, in namespace `namespace`. */
export interface OtherObject {
  readonly index: number;
  readonly namespace: string;
  /** The node its pod runs on (none of the benchmark's drivers). */
  readonly nodeName: string;
}

/** The namespace of the i-th object of other nodes. */
export const otherNamespace = (index: number): string =>
  `other-${String(Math.floor(index / OBJECTS_PER_NAMESPACE)).padStart(5, '0')}`;

/** Other nodes' pods are spread over this many node names. */
export const OTHER_NODES = 500;

/**
 * What a step adds to reach `total` objects of each kind from `existing`: the new
 * objects, and the namespaces that do not exist yet (in creation order).
 */
export function stepPlan(existing: number, total: number): { objects: OtherObject[]; newNamespaces: string[] } {
  const objects: OtherObject[] = [];
  const newNamespaces: string[] = [];
  for (let index = existing; index < total; index++) {
    const namespace = otherNamespace(index);
    if (index % OBJECTS_PER_NAMESPACE === 0) newNamespaces.push(namespace);
    objects.push({ index, namespace, nodeName: `other-node-${index % OTHER_NODES}` });
  }
  return { objects, newNamespaces };
}

/** Namespaces that hold `total` objects of each kind. */
export const namespacesFor = (total: number): number => Math.ceil(total / OBJECTS_PER_NAMESPACE);

/** One series of a Prometheus text: its labels and value. */
export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every series of `name` in a Prometheus text exposition. */
export function metricSeries(text: string, name: string): Series[] {
  const out: Series[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) out.push({ labels, value });
  }
  return out;
}

/** Sums `series` by `resource/scope`, leaving out zeros. */
function byWatch(series: readonly Series[], keep: (s: Series) => boolean = () => true): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of series) {
    if (!keep(s) || s.value === 0) continue;
    const key = `${s.labels['resource'] ?? ''}/${s.labels['scope'] ?? ''}`;
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

const sum = (r: Readonly<Record<string, number>>): number => Object.values(r).reduce((a, b) => a + b, 0);

/** What one scrape of a driver's /metrics says of its traffic with the API server (counters are totals so far). */
export interface DriverCounters {
  /** kube_watches_open by `resource/scope`. */
  readonly watchesOpen: Readonly<Record<string, number>>;
  /** kube_watch_events_total without BOOKMARK events (those carry no object), by `resource/scope`. */
  readonly watchEvents: Readonly<Record<string, number>>;
  readonly bookmarks: number;
  /** kube_watch_bytes_total (bookmarks included), by `resource/scope`. */
  readonly watchBytes: Readonly<Record<string, number>>;
  /** rest_client_requests_total, all methods and codes (a watch counts when opened). */
  readonly apiRequests: number;
}

export function driverCounters(metricsText: string): DriverCounters {
  const events = metricSeries(metricsText, 'kube_watch_events_total');
  return {
    watchesOpen: byWatch(metricSeries(metricsText, 'kube_watches_open')),
    watchEvents: byWatch(events, (s) => s.labels['type'] !== 'BOOKMARK'),
    bookmarks: events.filter((s) => s.labels['type'] === 'BOOKMARK').reduce((a, s) => a + s.value, 0),
    watchBytes: byWatch(metricSeries(metricsText, 'kube_watch_bytes_total')),
    apiRequests: sum(byMethod(metricSeries(metricsText, 'rest_client_requests_total'))),
  };
}

function byMethod(series: readonly Series[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of series) out[s.labels['method'] ?? ''] = (out[s.labels['method'] ?? ''] ?? 0) + s.value;
  return out;
}

/** What kube-apiserver's /metrics says of its watches: WATCH requests in flight, and events (and their bytes) sent so far. */
export interface ApiserverWatchCounters {
  /** apiserver_longrunning_requests{verb="WATCH"}: its own loopback informers' watches included. */
  readonly watchRequests: number;
  /** apiserver_watch_events_total, over every resource. */
  readonly eventsSent: number;
  /** apiserver_watch_events_sizes_sum: bytes of those events. */
  readonly bytesSent: number;
}

export function apiserverWatchCounters(metricsText: string): ApiserverWatchCounters {
  const total = (series: readonly Series[]) => series.reduce((a, s) => a + s.value, 0);
  return {
    watchRequests: total(
      metricSeries(metricsText, 'apiserver_longrunning_requests').filter((s) => s.labels['verb'] === 'WATCH'),
    ),
    eventsSent: total(metricSeries(metricsText, 'apiserver_watch_events_total')),
    bytesSent: total(metricSeries(metricsText, 'apiserver_watch_events_sizes_sum')),
  };
}

/** One driver at the end of a step. */
export interface DriverStep {
  readonly node: string;
  readonly rssMiB: number;
  /** Watches open by `resource/scope`, and their total. */
  readonly watchesOpen: Readonly<Record<string, number>>;
  readonly watches: number;
  /** Watch events (bookmarks left out) and bytes (bookmarks included) received while the step's objects were created, by `resource/scope`. */
  readonly eventsReceived: Readonly<Record<string, number>>;
  readonly bytesReceived: Readonly<Record<string, number>>;
  /** CPU time the driver used while the step's objects were created and delivered. */
  readonly cpuMs: number;
  /** API requests between two consecutive `rotation round done` lines after the step (one unchanged round). */
  readonly apiRequestsPerRound: number;
}

/** The apiserver during a step. */
export interface ApiserverStep {
  /** WATCH requests in flight after the step, less those the apiserver had open before any driver started (its own). */
  readonly driverWatchRequests: number;
  /** Watch events, and their bytes, it sent (to every watcher) while the step's objects were created and delivered. */
  readonly eventsSent: number;
  readonly bytesSent: number;
  /** CPU time kube-apiserver (and etcd) used while the step's objects were created and delivered. */
  readonly cpuMs: number;
  readonly etcdCpuMs: number;
  readonly rssMiB: number;
}

/** One row of the sweep: the cluster holds `objects` of each kind belonging to other nodes. */
export interface ClusterStep {
  readonly objects: number;
  readonly namespaces: number;
  /** Wall time to create the step's objects (and to see every driver's watch traffic settle). */
  readonly createSeconds: number;
  readonly settleSeconds: number;
  readonly drivers: readonly DriverStep[];
  readonly apiserver: ApiserverStep;
  /** Drivers that received a change to one used Secret of another node's namespace (no benchmark node uses it). */
  readonly otherSecretChangeReached: number;
  /** Drivers that received a change to node 0's own nodePublishSecretRef Secret. */
  readonly ownSecretChangeReached: number;
}

/** Median and maximum over the drivers of one number. */
export interface Spread {
  readonly median: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  return values.length === 0 ? { median: 0, max: 0 } : { median: median([...values]), max: Math.max(...values) };
}

/** What the table shows of a step. */
export interface StepSummary {
  readonly objects: number;
  readonly namespaces: number;
  readonly rssMiB: Spread;
  readonly watches: Spread;
  /** The watches of the driver with the most, by `resource/scope`. */
  readonly mostWatchesByKind: Readonly<Record<string, number>>;
  readonly eventsReceived: Spread;
  readonly kibReceived: Spread;
  readonly driverCpuMs: Spread;
  readonly apiRequestsPerRound: Spread;
  readonly apiserverWatches: number;
  readonly apiserverEventsSent: number;
  readonly apiserverMiBSent: number;
  readonly apiserverCpuMs: number;
  readonly etcdCpuMs: number;
  readonly apiserverRssMiB: number;
  readonly otherSecretChangeReached: number;
  readonly ownSecretChangeReached: number;
  readonly drivers: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

export function summarize(step: ClusterStep): StepSummary {
  const d = step.drivers;
  return {
    objects: step.objects,
    namespaces: step.namespaces,
    rssMiB: spread(d.map((x) => x.rssMiB)),
    watches: spread(d.map((x) => x.watches)),
    mostWatchesByKind:
      d.reduce<DriverStep | undefined>((a, x) => (a && a.watches >= x.watches ? a : x), undefined)?.watchesOpen ?? {},
    eventsReceived: spread(d.map((x) => sum(x.eventsReceived))),
    kibReceived: spread(d.map((x) => round1(sum(x.bytesReceived) / 1024))),
    driverCpuMs: spread(d.map((x) => x.cpuMs)),
    apiRequestsPerRound: spread(d.map((x) => x.apiRequestsPerRound)),
    apiserverWatches: step.apiserver.driverWatchRequests,
    apiserverEventsSent: step.apiserver.eventsSent,
    apiserverMiBSent: round1(step.apiserver.bytesSent / (1024 * 1024)),
    apiserverCpuMs: step.apiserver.cpuMs,
    etcdCpuMs: step.apiserver.etcdCpuMs,
    apiserverRssMiB: step.apiserver.rssMiB,
    otherSecretChangeReached: step.otherSecretChangeReached,
    ownSecretChangeReached: step.ownSecretChangeReached,
    drivers: d.length,
  };
}

export type TargetStatus = 'ok' | 'MISSED' | 'n/a';

/** One of issue 30's targets, judged on the sweep. */
export interface ClusterTarget {
  readonly id: string;
  readonly description: string;
  readonly status: TargetStatus;
  readonly detail: string;
}

/** RSS counts as flat when the largest step's median is within this fraction of the smallest step's. */
export const RSS_FLAT_FRACTION = 0.1;

/** Watches a driver may hold: 3 (pods, pod statuses, one more) + one per namespace with volumes on its node. */
export function watchLimit(namespacesWithVolumes: number): number {
  return 3 + namespacesWithVolumes;
}

/** " (pods/cluster 1, …)": what the driver with the most watches watched, in the step where it had the most. */
function kindsText(steps: readonly StepSummary[]): string {
  const most = steps.reduce<StepSummary | undefined>(
    (a, s) => (a && a.watches.max >= s.watches.max ? a : s),
    undefined,
  );
  const kinds = Object.entries(most?.mostWatchesByKind ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return kinds.length === 0 ? '' : ` (${kinds.map(([k, n]) => `${k} ${n}`).join(', ')})`;
}

/** Issue 30's targets over the steps (`namespacesPerNode`: namespaces with volumes on each benchmark node). */
export function clusterTargets(steps: readonly StepSummary[], namespacesPerNode: number): ClusterTarget[] {
  const status = (applies: boolean, ok: boolean): TargetStatus => (applies ? (ok ? 'ok' : 'MISSED') : 'n/a');
  const first = steps[0];
  const last = steps[steps.length - 1];
  const limit = watchLimit(namespacesPerNode);
  const maxOf = (f: (s: StepSummary) => number) => Math.max(0, ...steps.map(f));
  return [
    {
      id: 'rss-flat',
      description: `driver RSS flat (largest step's median within ${RSS_FLAT_FRACTION * 100} % of the smallest's)`,
      status: status(
        steps.length >= 2,
        first !== undefined &&
          last !== undefined &&
          last.rssMiB.median <= first.rssMiB.median * (1 + RSS_FLAT_FRACTION),
      ),
      detail:
        first && last
          ? `${first.rssMiB.median.toFixed(1)} MiB at ${first.objects} → ${last.rssMiB.median.toFixed(1)} MiB at ${last.objects}`
          : 'no step',
    },
    {
      id: 'no-foreign-events',
      description: "no driver receives a watch event for other nodes' objects",
      status: status(steps.length > 0, maxOf((s) => s.eventsReceived.max) === 0),
      detail: `most events one driver received in a step: ${maxOf((s) => s.eventsReceived.max)}`,
    },
    {
      id: 'unchanged-round-no-requests',
      description: 'an unchanged rotation round makes 0 API requests',
      status: status(steps.length > 0, maxOf((s) => s.apiRequestsPerRound.max) === 0),
      detail: `most requests of one driver in one round: ${maxOf((s) => s.apiRequestsPerRound.max)}`,
    },
    {
      id: 'watches-per-driver',
      description: `watches per driver ≤ 3 + namespaces with volumes on the node (${limit})`,
      status: status(steps.length > 0, maxOf((s) => s.watches.max) <= limit),
      detail: `most watches of one driver: ${maxOf((s) => s.watches.max)}${kindsText(steps)}`,
    },
    {
      id: 'secret-change-reaches-users-only',
      description: 'a change to one Secret reaches only the nodes that use it',
      status: status(
        steps.length > 0,
        steps.every((s) => s.otherSecretChangeReached === 0 && s.ownSecretChangeReached === 1),
      ),
      detail: `another node's Secret reached ${steps.map((s) => s.otherSecretChangeReached).join('/')} drivers, node 0's own Secret ${steps.map((s) => s.ownSecretChangeReached).join('/')} (per step; want 0 and 1)`,
    },
  ];
}

const cell = (s: Spread, digits = 0): string =>
  s.median === s.max ? s.median.toFixed(digits) : `${s.median.toFixed(digits)} (${s.max.toFixed(digits)})`;

/** The sweep's table: one row per step, per-driver numbers as median (max) over the K drivers. */
export function stepsTable(steps: readonly StepSummary[]): string {
  return table(
    [
      'objects',
      'namespaces',
      'driver RSS MiB',
      'watches',
      'events received',
      'KiB received',
      'driver CPU ms',
      'API req / round',
      'apiserver watches',
      'apiserver events / MiB sent',
      'apiserver / etcd CPU ms',
      'apiserver RSS MiB',
      'Secret change reached',
    ],
    steps.map((s) => [
      String(s.objects),
      String(s.namespaces),
      cell(s.rssMiB, 1),
      cell(s.watches),
      cell(s.eventsReceived),
      cell(s.kibReceived, 1),
      cell(s.driverCpuMs),
      cell(s.apiRequestsPerRound),
      String(s.apiserverWatches),
      `${s.apiserverEventsSent} / ${s.apiserverMiBSent.toFixed(1)}`,
      `${Math.round(s.apiserverCpuMs)} / ${Math.round(s.etcdCpuMs)}`,
      s.apiserverRssMiB.toFixed(0),
      `${s.otherSecretChangeReached} + ${s.ownSecretChangeReached} of ${s.drivers}`,
    ]),
    new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
  );
}

/** bench/results/cluster-latest.json. */
export interface ClusterResults extends BenchRunHeader<'cluster'> {
  readonly config: Readonly<Record<string, unknown>>;
  readonly steps: readonly ClusterStep[];
  readonly summary: readonly StepSummary[];
  /** The same cluster with simulated nodes added (empty with BENCH_CLUSTER_SIM_NODES=0). */
  readonly simulation: readonly SimStep[];
  readonly targets: readonly ClusterTarget[];
  readonly checks: Readonly<Record<string, boolean>>;
}

/** One change as simulated nodes saw it: who uses it, who received it, what the apiserver sent meanwhile. */
export interface Reach {
  /** Nodes whose watches should deliver it. */
  readonly users: number;
  /** Nodes that received at least one event of the changed kind. */
  readonly reached: number;
  /** apiserver_watch_events_total and _sizes_sum deltas, every watcher included. */
  readonly eventsSent: number;
  readonly kibSent: number;
  /** From the write until the last user received it. */
  readonly seconds: number;
}

/** The cluster with `simulatedNodes` simulated nodes beside the real drivers (bench/cluster-sim.ts). */
export interface SimStep {
  readonly simulatedNodes: number;
  readonly realDrivers: number;
  /** Wall time to open and list the watch sets of the nodes this step added. */
  readonly openSeconds: number;
  /** Watches one simulated node holds (as a driver with volumes in one namespace). */
  readonly watchesPerNode: number;
  /** WATCH requests in flight at the apiserver, less its own. */
  readonly apiserverWatches: number;
  readonly apiserverRssMiB: number;
  /** The apiserver's Go heap and stacks in use (go_memstats_heap_inuse_bytes + stack_inuse_bytes): unlike RSS, without memory freed but not returned. */
  readonly apiserverGoMiB: number;
  /** kube-apiserver CPU while nothing changed, in % of one core. */
  readonly apiserverIdleCpuPercent: number;
  /** With each node's watches scoped as the driver's: a used Secret changed, a class created (both in one node's namespace), and a new namespace of TENANT_CLASSES classes no node uses. */
  readonly scoped: { readonly secretChange: Reach; readonly newClass: Reach; readonly newTenant: Reach };
  /** With upstream v1.6.1's cluster-wide class and managed-Secret watches added on every simulated node. */
  readonly upstream: {
    readonly openSeconds: number;
    readonly classChange: Reach;
    /** A Secret a real driver syncs (managed=true), annotated. */
    readonly managedSecretChange: Reach;
    readonly newTenant: Reach;
  };
}

/** The Go runtime's heap and stacks in use, from a Go process's /metrics (MiB). */
export function apiserverGoMiB(metricsText: string): number {
  const value = (name: string) => metricSeries(metricsText, name)[0]?.value ?? Number.NaN;
  return round1((value('go_memstats_heap_inuse_bytes') + value('go_memstats_stack_inuse_bytes')) / (1024 * 1024));
}

/** KiB of apiserver Go memory per watch added from one simulation step to the next (undefined for the first). */
function goKiBPerWatch(steps: readonly SimStep[], i: number): number | undefined {
  const prev = steps[i - 1];
  const cur = steps[i];
  if (!prev || !cur || cur.apiserverWatches <= prev.apiserverWatches) return undefined;
  return Math.round(
    ((cur.apiserverGoMiB - prev.apiserverGoMiB) * 1024) / (cur.apiserverWatches - prev.apiserverWatches),
  );
}

/** Classes a new tenant's namespace gets in the simulation. */
export const TENANT_CLASSES = 100;

/** BENCH_CLUSTER_SIM_NODES: increasing counts of simulated nodes, comma-separated; "0" turns the simulation off. */
export function simSteps(raw: string | undefined, fallback: readonly number[]): number[] {
  if (raw?.trim() === '0') return [];
  return objectSteps(raw, fallback);
}

/** The simulation's target: a change reaches the nodes that use it and no other, at every size. */
export function simTargets(steps: readonly SimStep[]): ClusterTarget[] {
  const ok = steps.every(
    (s) =>
      s.scoped.secretChange.reached === s.scoped.secretChange.users &&
      s.scoped.newClass.reached === s.scoped.newClass.users &&
      s.scoped.newTenant.reached === 0,
  );
  return [
    {
      id: 'sim-change-reaches-users-only',
      description: 'with simulated nodes too, a change reaches only the nodes that use it',
      status: steps.length === 0 ? 'n/a' : ok ? 'ok' : 'MISSED',
      detail: steps
        .map(
          (s) =>
            `${s.simulatedNodes} nodes: Secret ${s.scoped.secretChange.reached}/${s.scoped.secretChange.users}, class ${s.scoped.newClass.reached}/${s.scoped.newClass.users}, new tenant ${s.scoped.newTenant.reached}/0`,
        )
        .join('; '),
    },
  ];
}

const reachCell = (r: Reach): string => `${r.reached} of ${r.users}: ${r.eventsSent} ev`;

/** The simulation's table: one row per number of simulated nodes. */
export function simTable(steps: readonly SimStep[]): string {
  return table(
    [
      'nodes',
      'watches/node',
      'apiserver watches',
      'open s',
      'apiserver RSS / Go MiB',
      'Go KiB/watch',
      'idle CPU %',
      'Secret changed',
      'class created',
      `${TENANT_CLASSES} classes, new ns`,
      "upstream's: class changed",
      'synced Secret changed',
      `${TENANT_CLASSES} classes, new ns`,
    ],
    steps.map((s, i) => [
      `${s.simulatedNodes} + ${s.realDrivers}`,
      String(s.watchesPerNode),
      String(s.apiserverWatches),
      s.openSeconds.toFixed(1),
      `${s.apiserverRssMiB.toFixed(0)} / ${s.apiserverGoMiB.toFixed(0)}`,
      String(goKiBPerWatch(steps, i) ?? '-'),
      s.apiserverIdleCpuPercent.toFixed(1),
      reachCell(s.scoped.secretChange),
      reachCell(s.scoped.newClass),
      `${s.scoped.newTenant.reached}: ${s.scoped.newTenant.eventsSent} ev`,
      `${reachCell(s.upstream.classChange)}, ${s.upstream.classChange.seconds.toFixed(1)} s`,
      `${reachCell(s.upstream.managedSecretChange)}, ${s.upstream.managedSecretChange.seconds.toFixed(1)} s`,
      `${s.upstream.newTenant.reached}: ${s.upstream.newTenant.eventsSent} ev, ${(s.upstream.newTenant.kibSent / 1024).toFixed(1)} MiB, ${s.upstream.newTenant.seconds.toFixed(1)} s`,
    ]),
    new Set([1, 2, 3, 4, 5, 6]),
  );
}
