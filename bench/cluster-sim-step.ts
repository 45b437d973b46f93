import { resolveEndpoint } from '../driver/k8s/client/connect.js';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { corePath, secretProviderClassPath } from '../driver/k8s/resource-paths.js';
import type { KubeCluster } from '../test/support/kube-cluster.js';
import {
  apiserverGoMiB,
  apiserverWatchCounters,
  OBJECTS_PER_NAMESPACE,
  otherNamespace,
  TENANT_CLASSES,
  type ApiserverWatchCounters,
  type Reach,
  type SimStep,
} from './cluster-report.js';
import { currentResourceVersion, SimulatedNode, until } from './cluster-sim.js';
import { apiserverCollectGarbage, apiserverMetrics, createIgnoringConflict } from './kube-env.js';
import { idleCpuMsPerSecond, mib, processMemory } from './proc.js';
import { runLimited } from './rounds.js';

/**
 * One step of the cluster benchmark's simulation (bench/README.md, "Simulated nodes"):
 * simulated nodes added up to a count, then the apiserver measured and three changes made
 * in the scoped design, then two in upstream's with its watches added on every node.
 */

/** Simulated nodes opened at once. */
const START_CONCURRENCY = 16;
const TIMEOUT_MS = 180_000;
/** A change has been delivered when no simulated node received an event for this long. */
const QUIET_MS = 1000;
/** The window over which the apiserver's CPU is read while nothing changes. */
const IDLE_MS = 10_000;

/** What a simulation step works with: the cluster, the admin's client, and the benchmark's controls. */
export interface SimEnv {
  readonly cluster: KubeCluster;
  readonly ca: Buffer;
  readonly admin: KubeApi;
  readonly apiserverPid: number;
  /** WATCH requests the apiserver had open before any driver started: its own informers'. */
  readonly ownWatchRequests: number;
  readonly realDrivers: number;
  /** A Secret a real driver syncs (labelled managed=true): upstream's cluster-wide watch of them delivers its change everywhere. */
  readonly managedSecret: { readonly namespace: string; readonly name: string };
  readonly signal: AbortSignal;
  readonly progress: (text: string) => void;
  readonly check: (name: string, ok: boolean, detail: string) => void;
}

const seconds = (t0: number): number => Math.round((performance.now() - t0) / 100) / 10;

async function apiCounters(env: SimEnv): Promise<ApiserverWatchCounters> {
  return apiserverWatchCounters(await apiserverMetrics(env.cluster, env.ca));
}

/** Waits until no simulated node has received an event for QUIET_MS. */
async function quiet(env: SimEnv, sims: readonly SimulatedNode[]): Promise<void> {
  const total = () => sims.reduce((a, s) => a + s.tally.events, 0);
  let last = total();
  let quietSince = Date.now();
  await until(
    () => {
      const now = total();
      if (now !== last) [last, quietSince] = [now, Date.now()];
      return Date.now() - quietSince >= QUIET_MS;
    },
    'simulated nodes quiet',
    TIMEOUT_MS,
    env.signal,
  );
}

/** Reach of a change since `before` (tallies and apiserver counters), to nodes of which `users` use it. */
function reachSince(
  sims: readonly SimulatedNode[],
  users: number,
  kind: 'classes' | 'secrets',
  before: { readonly tallies: ReadonlyMap<SimulatedNode, number>; readonly api: ApiserverWatchCounters },
  after: ApiserverWatchCounters,
  elapsed: number,
  expected: (s: SimulatedNode) => number = () => 0,
): Reach {
  return {
    users,
    reached: sims.filter((s) => s.tally[kind] - before.tallies.get(s)! - expected(s) > 0).length,
    eventsSent: after.eventsSent - before.api.eventsSent,
    kibSent: Math.round((after.bytesSent - before.api.bytesSent) / 1024),
    seconds: elapsed,
  };
}

/**
 * Makes `change`, waits until each of `users` received `perUser` events of `kind` and the
 * simulated nodes went quiet, and says who received any, and what the apiserver sent
 * (since `apiBefore`, when the caller just read the counters).
 */
async function reachOf(
  env: SimEnv,
  sims: readonly SimulatedNode[],
  users: readonly SimulatedNode[],
  kind: 'classes' | 'secrets',
  perUser: number,
  change: () => Promise<void>,
  apiBefore?: ApiserverWatchCounters,
): Promise<Reach> {
  const before = { tallies: new Map(sims.map((s) => [s, s.tally[kind]])), api: apiBefore ?? (await apiCounters(env)) };
  const t0 = performance.now();
  await change();
  await until(
    () => users.every((u) => u.tally[kind] - before.tallies.get(u)! >= perUser),
    `the change reached its ${users.length} users`,
    TIMEOUT_MS,
    env.signal,
  );
  const elapsed = seconds(t0);
  await quiet(env, sims);
  return reachSince(sims, users.length, kind, before, await apiCounters(env), elapsed);
}

function createClass(env: SimEnv, namespace: string, name: string): Promise<void> {
  return createIgnoringConflict(env.admin, secretProviderClassPath(namespace), {
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    metadata: { name },
    spec: { provider: 'file', parameters: { objects: '' } },
  });
}

/** Creates a namespace (its own events are not counted) and returns what creates its TENANT_CLASSES classes. */
async function newTenant(env: SimEnv, namespace: string): Promise<() => Promise<void>> {
  await createIgnoringConflict(env.admin, corePath('namespaces'), { metadata: { name: namespace } });
  return () =>
    runLimited(
      Array.from({ length: TENANT_CLASSES }, (_, i) => i),
      16,
      (i) => createClass(env, namespace, `tenant-${i}`),
      env.signal,
    );
}

/**
 * A new namespace of TENANT_CLASSES classes no node uses, then (a positive control) one
 * class in `users`' namespace: once every user has that one, whatever the apiserver sent
 * for the earlier classes has been sent. Returns who received any of the tenant's
 * classes, and who received the control class.
 */
async function tenantThenClass(
  env: SimEnv,
  sims: readonly SimulatedNode[],
  users: readonly SimulatedNode[],
  tenant: string,
  control: { readonly namespace: string; readonly name: string },
): Promise<{ newTenant: Reach; newClass: Reach }> {
  const createTenant = await newTenant(env, tenant);
  const before = { tallies: new Map(sims.map((s) => [s, s.tally.classes])), api: await apiCounters(env) };
  const t0 = performance.now();
  await createTenant();
  const tenantSeconds = seconds(t0);
  const afterTenant = await apiCounters(env);
  const newClass = await reachOf(
    env,
    sims,
    users,
    'classes',
    1,
    () => createClass(env, control.namespace, control.name),
    afterTenant,
  );
  const isUser = new Set(users);
  const tenantReach = reachSince(sims, 0, 'classes', before, afterTenant, tenantSeconds, (s) =>
    isUser.has(s) ? 1 : 0,
  );
  return { newTenant: tenantReach, newClass };
}

/** Opens the watch sets of the simulated nodes `sims` lacks up to `count`; node i uses other-node namespace i mod `otherNamespaces`. */
async function addNodes(env: SimEnv, sims: SimulatedNode[], count: number, otherNamespaces: number): Promise<void> {
  const endpoint = resolveEndpoint(env.cluster.driverKubeconfig, {});
  const added = Array.from({ length: count - sims.length }, (_, j) => sims.length + j);
  await runLimited(
    added,
    START_CONCURRENCY,
    async (i) => {
      const first = (i % otherNamespaces) * OBJECTS_PER_NAMESPACE;
      const node = new SimulatedNode(endpoint, `sim-node-${i}`, otherNamespace(first), `spc-${first}`, `used-${first}`);
      sims.push(node);
      await node.start(TIMEOUT_MS, env.signal);
    },
    env.signal,
  );
}

/**
 * Adds simulated nodes until there are `count`, then measures the apiserver, who receives
 * three changes, and two with upstream's cluster-wide watches added on every simulated node.
 */
export async function measureSimStep(
  env: SimEnv,
  sims: SimulatedNode[],
  count: number,
  otherNamespaces: number,
): Promise<SimStep> {
  env.progress(`simulation ${count}: opening the watch sets of ${count - sims.length} more simulated nodes`);
  const t0 = performance.now();
  await addNodes(env, sims, count, otherNamespaces);
  const openSeconds = seconds(t0);
  await quiet(env, sims);
  const open = sims.map((s) => s.tally.open);
  const [fewest, most] = [Math.min(...open), Math.max(...open)];
  env.check('simulated-watch-sets-complete', fewest === most, `${count} nodes: ${fewest} to ${most} watches each`);
  const [idleCpuMsPerS = 0] = await idleCpuMsPerSecond([env.apiserverPid], IDLE_MS);
  await apiserverCollectGarbage(env.cluster, env.ca);
  const [metricsText, apiserverRss] = await Promise.all([
    apiserverMetrics(env.cluster, env.ca),
    processMemory(env.apiserverPid),
  ]);
  const target = sims[0]!;
  const users = sims.filter((s) => s.namespace === target.namespace);
  const stamp = { metadata: { annotations: { 'bench.secrets-store-csi/touched': `sim-${count}` } } };
  const secretChange = await reachOf(env, sims, users, 'secrets', 1, async () => {
    await env.admin.mergePatch(corePath('secrets', target.namespace, target.usedSecretName), stamp);
  });
  const scoped = await tenantThenClass(env, sims, users, `sim-tenant-${count}-a`, {
    namespace: target.namespace,
    name: `sim-class-${count}`,
  });
  env.progress(
    `simulation ${count}: a Secret change reached ${secretChange.reached} of ${users.length} users, a new class ${scoped.newClass.reached}, ${TENANT_CLASSES} classes of a new namespace ${scoped.newTenant.reached}; now with upstream's cluster-wide watches`,
  );
  const rv = await currentResourceVersion(env.admin, secretProviderClassPath());
  const t1 = performance.now();
  try {
    await runLimited(sims, START_CONCURRENCY, (s) => s.openUpstreamWatches(rv, TIMEOUT_MS, env.signal), env.signal);
    const upstreamOpenSeconds = seconds(t1);
    const classChange = await reachOf(env, sims, sims, 'classes', 1, async () => {
      await env.admin.mergePatch(secretProviderClassPath(target.namespace, target.className), stamp);
    });
    const managedSecretChange = await reachOf(env, sims, sims, 'secrets', 1, async () => {
      const { namespace, name } = env.managedSecret;
      await env.admin.mergePatch(corePath('secrets', namespace, name), stamp);
    });
    const upstreamTenant = await reachOf(
      env,
      sims,
      sims,
      'classes',
      TENANT_CLASSES,
      await newTenant(env, `sim-tenant-${count}-b`),
    );
    env.progress(
      `simulation ${count}: with upstream's watches one class change reached ${classChange.reached} nodes (${classChange.eventsSent} events sent), one synced Secret's ${managedSecretChange.reached}, ${TENANT_CLASSES} new classes ${upstreamTenant.eventsSent} events in ${upstreamTenant.seconds} s`,
    );
    return {
      simulatedNodes: count,
      realDrivers: env.realDrivers,
      openSeconds,
      watchesPerNode: most,
      apiserverWatches: apiserverWatchCounters(metricsText).watchRequests - env.ownWatchRequests,
      apiserverRssMiB: mib(apiserverRss.rssKiB),
      apiserverGoMiB: apiserverGoMiB(metricsText),
      apiserverIdleCpuPercent: Math.round(idleCpuMsPerS) / 10,
      scoped: { secretChange, ...scoped },
      upstream: { openSeconds: upstreamOpenSeconds, classChange, managedSecretChange, newTenant: upstreamTenant },
    };
  } finally {
    await Promise.all(sims.map((s) => s.closeUpstreamWatches()));
  }
}
