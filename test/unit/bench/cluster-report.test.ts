import { expect } from 'chai';
import {
  apiserverGoMiB,
  apiserverWatchCounters,
  clusterTargets,
  driverCounters,
  objectSteps,
  otherNamespace,
  simSteps,
  simTable,
  simTargets,
  stepPlan,
  stepsTable,
  summarize,
  type ClusterStep,
  type DriverStep,
  type Reach,
  type SimStep,
} from '../../../bench/cluster-report.js';

const DRIVER_METRICS = [
  '# HELP kube_watches_open Kubernetes API watches open now, by resource and scope (cluster or namespace)',
  '# TYPE kube_watches_open gauge',
  'kube_watches_open{resource="pods",scope="cluster"} 1',
  'kube_watches_open{resource="secrets",scope="cluster"} 1',
  'kube_watches_open{resource="secrets",scope="namespace"} 2',
  'kube_watches_open{resource="secretproviderclasses",scope="cluster"} 0',
  'kube_watch_events_total{resource="secrets",scope="cluster",type="ADDED"} 40',
  'kube_watch_events_total{resource="secrets",scope="cluster",type="MODIFIED"} 2',
  'kube_watch_events_total{resource="secrets",scope="cluster",type="BOOKMARK"} 5',
  'kube_watch_bytes_total{resource="secrets",scope="cluster"} 51200',
  'rest_client_requests_total{method="GET",code="200"} 12',
  'rest_client_requests_total{method="PATCH",code="200"} 3',
  '',
].join('\n');

function driver(node: string, over: Partial<DriverStep> = {}): DriverStep {
  return {
    node,
    rssMiB: 90,
    watchesOpen: { 'pods/cluster': 1 },
    watches: 4,
    eventsReceived: {},
    bytesReceived: {},
    cpuMs: 10,
    apiRequestsPerRound: 0,
    ...over,
  };
}

function step(objects: number, drivers: DriverStep[], reached: [number, number] = [0, 1]): ClusterStep {
  return {
    objects,
    namespaces: objects / 10,
    createSeconds: 1,
    settleSeconds: 3,
    drivers,
    apiserver: {
      driverWatchRequests: 40,
      eventsSent: 100,
      bytesSent: 2 * 1024 * 1024,
      cpuMs: 900,
      etcdCpuMs: 300,
      rssMiB: 300,
    },
    otherSecretChangeReached: reached[0],
    ownSecretChangeReached: reached[1],
  };
}

describe('bench/cluster-report: the cluster benchmark’s steps, counters, summary and targets', () => {
  it('reads BENCH_CLUSTER_OBJECTS as increasing positive steps, the default when unset', () => {
    expect(objectSteps(undefined, [100, 1000])).to.deep.equal([100, 1000]);
    expect(objectSteps(' ', [100])).to.deep.equal([100]);
    expect(objectSteps('50, 500,5000', [100])).to.deep.equal([50, 500, 5000]);
    expect(() => objectSteps('1000,100', [100])).to.throw(/increasing positive integers/);
    expect(() => objectSteps('0', [100])).to.throw(/BENCH_CLUSTER_OBJECTS/);
    expect(() => objectSteps('1e3x', [100])).to.throw(/got "1e3x"/);
  });

  it('plans a step: the objects it adds, ten to a namespace, and only the namespaces not made before', () => {
    const first = stepPlan(0, 25);
    expect(first.objects).to.have.length(25);
    expect(first.newNamespaces).to.deep.equal([otherNamespace(0), otherNamespace(10), otherNamespace(20)]);
    expect(first.objects[12]).to.deep.include({ index: 12, namespace: otherNamespace(10) });
    const next = stepPlan(25, 40);
    expect(next.objects.map((o) => o.index)).to.deep.equal(Array.from({ length: 15 }, (_, i) => 25 + i));
    // other-00002 exists since the first step.
    expect(next.newNamespaces).to.deep.equal([otherNamespace(30)]);
    expect(new Set(stepPlan(0, 2000).objects.map((o) => o.nodeName)).size).to.equal(500);
  });

  it("reads a driver's watches, events (bookmarks apart), bytes and requests from its /metrics", () => {
    const c = driverCounters(DRIVER_METRICS);
    expect(c.watchesOpen).to.deep.equal({ 'pods/cluster': 1, 'secrets/cluster': 1, 'secrets/namespace': 2 });
    expect(c.watchEvents).to.deep.equal({ 'secrets/cluster': 42 });
    expect(c.bookmarks).to.equal(5);
    expect(c.watchBytes).to.deep.equal({ 'secrets/cluster': 51200 });
    expect(c.apiRequests).to.equal(15);
  });

  it("reads kube-apiserver's WATCH requests in flight and the watch events it sent", () => {
    const text = [
      'apiserver_longrunning_requests{component="apiserver",resource="pods",scope="cluster",verb="WATCH"} 3',
      'apiserver_longrunning_requests{component="apiserver",resource="pods",scope="cluster",verb="CONNECT"} 9',
      'apiserver_watch_events_total{group="",kind="Secret",version="v1"} 70',
      'apiserver_watch_events_total{group="",kind="Pod",version="v1"} 5',
      'apiserver_watch_events_sizes_sum{group="",kind="Secret",version="v1"} 7000',
    ].join('\n');
    expect(apiserverWatchCounters(text)).to.deep.equal({ watchRequests: 3, eventsSent: 75, bytesSent: 7000 });
  });

  it('summarizes the drivers of a step as median and max, and prints one row per step', () => {
    const s = summarize(
      step(100, [
        driver('a', {
          rssMiB: 90,
          eventsReceived: { 'secrets/cluster': 200 },
          bytesReceived: { 'secrets/cluster': 2048 },
        }),
        driver('b', {
          rssMiB: 94,
          eventsReceived: { 'secrets/cluster': 100 },
          bytesReceived: { 'secrets/cluster': 1024 },
        }),
        driver('c', { rssMiB: 92 }),
      ]),
    );
    expect(s.rssMiB).to.deep.equal({ median: 92, max: 94 });
    expect(s.eventsReceived).to.deep.equal({ median: 100, max: 200 });
    expect(s.kibReceived).to.deep.equal({ median: 1, max: 2 });
    expect(s.apiserverMiBSent).to.equal(2);
    const lines = stepsTable([s]).split('\n');
    expect(lines).to.have.length(3);
    expect(lines[0]).to.match(/^objects\s+namespaces\s+driver RSS MiB/);
    expect(lines[2]).to.match(/^\s*100\s+10\s+92\.0 \(94\.0\)\s+4\s+100 \(200\)/);
    expect(lines[2]).to.match(/900 \/ 300/);
    expect(lines[2]).to.match(/0 \+ 1 of 3$/);
  });

  it("judges issue 30's targets: met by scoped drivers, missed by drivers that hear the whole cluster", () => {
    const scoped = [100, 10_000].map((n) => summarize(step(n, [driver('a'), driver('b')])));
    expect(clusterTargets(scoped, 1).map((t) => [t.id, t.status])).to.deep.equal([
      ['rss-flat', 'ok'],
      ['no-foreign-events', 'ok'],
      ['unchanged-round-no-requests', 'ok'],
      ['watches-per-driver', 'ok'],
      ['secret-change-reaches-users-only', 'ok'],
    ]);
    const fiveKinds = { 'pods/cluster': 1, 'secrets/namespace': 2, 'secretproviderclasses/namespace': 1 };
    const wide = [
      summarize(
        step(
          100,
          [driver('a', { eventsReceived: { 'secrets/cluster': 200 }, watches: 5, watchesOpen: fiveKinds })],
          [1, 1],
        ),
      ),
      summarize(step(10_000, [driver('a', { rssMiB: 140, apiRequestsPerRound: 2 })], [1, 1])),
    ];
    expect(clusterTargets(wide, 1).map((t) => t.status)).to.deep.equal([
      'MISSED',
      'MISSED',
      'MISSED',
      'MISSED',
      'MISSED',
    ]);
    expect(clusterTargets(wide, 1)[3]!.detail).to.equal(
      'most watches of one driver: 5 (pods/cluster 1, secretproviderclasses/namespace 1, secrets/namespace 2)',
    );
    expect(clusterTargets([], 1).every((t) => t.status === 'n/a')).to.equal(true);
  });

  it('reads BENCH_CLUSTER_SIM_NODES: increasing counts, the default when unset, none for "0"', () => {
    expect(simSteps(undefined, [250, 1000])).to.deep.equal([250, 1000]);
    expect(simSteps(' 0 ', [250])).to.deep.equal([]);
    expect(simSteps('10,20', [250])).to.deep.equal([10, 20]);
    expect(() => simSteps('20,10', [250])).to.throw(/increasing/);
  });

  it('judges the simulation: a change reaches exactly its users, a namespace nobody uses reaches nobody', () => {
    const reach = (users: number, reached: number): Reach => ({
      users,
      reached,
      eventsSent: reached,
      kibSent: 1,
      seconds: 0.1,
    });
    const sim = (nodes: number, scoped: SimStep['scoped']): SimStep => ({
      simulatedNodes: nodes,
      realDrivers: 20,
      openSeconds: 1,
      watchesPerNode: 5,
      apiserverWatches: nodes * 5 + 100,
      apiserverRssMiB: 1000,
      apiserverGoMiB: nodes / 10,
      apiserverIdleCpuPercent: 2,
      scoped,
      upstream: {
        openSeconds: 1,
        classChange: reach(nodes, nodes),
        managedSecretChange: reach(nodes, nodes),
        newTenant: reach(nodes, nodes),
      },
    });
    const good = sim(1000, { secretChange: reach(1, 1), newClass: reach(2, 2), newTenant: reach(0, 0) });
    expect(simTargets([good]).map((t) => t.status)).to.deep.equal(['ok']);
    const lines = simTable([good]).split('\n');
    expect(lines).to.have.length(3);
    expect(lines[2]).to.match(/^1000 \+ 20 +5 +5100 /);
    // 100 MiB more Go memory for 5,000 more watches: 20 KiB each.
    const two = simTable([good, sim(2000, good.scoped)]).split('\n');
    expect(two[3]).to.match(/1000 \/ 200 +20 /);
    expect(two[2]).to.match(/1000 \/ 100 +- /);
    expect(lines[2]).to.include('1000 of 1000: 1000 ev');
    for (const scoped of [
      { secretChange: reach(1, 3), newClass: reach(2, 2), newTenant: reach(0, 0) },
      { secretChange: reach(1, 1), newClass: reach(2, 1), newTenant: reach(0, 0) },
      { secretChange: reach(1, 1), newClass: reach(2, 2), newTenant: reach(0, 4) },
    ])
      expect(simTargets([good, sim(2000, scoped)])[0]!.status).to.equal('MISSED');
    expect(simTargets([])[0]!.status).to.equal('n/a');
    const goMetrics = 'go_memstats_heap_inuse_bytes 1.048576e+08\ngo_memstats_stack_inuse_bytes 5242880\n';
    expect(apiserverGoMiB(goMetrics)).to.equal(105);
  });
});
