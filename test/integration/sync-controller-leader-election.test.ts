import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import {
  createSecretSync,
  installSyncControllerManifests,
  metricSum,
  SYNC_CONTROLLER_USER,
  startSyncControllerReplica,
  startSyncControllerStack,
  type SyncControllerReplica,
  type SyncControllerStack,
} from '../support/sync-controller.js';
import { auditedCalls } from '../support/rbac-identity.js';
import { until } from '../support/until.js';

// Two replicas of the SecretSync controller with --leader-elect against a real
// kube-apiserver, each authorised only by deploy/sync-controller/rbac.yaml: one leads and
// syncs, the other waits, and takes over when the leader dies, stops or loses the Lease.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const LEASE_NS = 'kube-system';

describe('sync controller: leader election by Lease (two replicas, real kube-apiserver)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let leases: CoordinationV1Api;
  let ns: string;
  const running: { stop(): Promise<unknown> }[] = [];

  /** The leader election flags with a Lease of this test's own. */
  const electionArgs = (lease: string, durations: [string, string, string]) => [
    '--leader-elect',
    `--leader-election-namespace=${LEASE_NS}`,
    `--leader-elect-resource-name=${lease}`,
    `--leader-elect-lease-duration=${durations[0]}`,
    `--leader-elect-renew-deadline=${durations[1]}`,
    `--leader-elect-retry-period=${durations[2]}`,
    '--rotation-poll-interval=0',
  ];
  const readLease = (name: string) => leases.readNamespacedLease({ name, namespace: LEASE_NS });
  const leading = async (replica: SyncControllerReplica) =>
    metricSum(await replica.metrics(), 'leader_election_master_status');
  const createSync = (name: string) =>
    createSecretSync(cluster, ns, name, {
      secretProviderClassName: 'db',
      secretObject: { data: [{ sourcePath: 'password', targetKey: 'password' }] },
    });
  /** SecretSync lists (not watches) by the controller's identity so far, from the audit log. */
  const secretSyncLists = async () =>
    (await auditedCalls(cluster, SYNC_CONTROLLER_USER)).filter((c) => c.verb === 'list' && c.resource === 'secretsyncs')
      .length;
  const untilSecret = (name: string) =>
    until(`Secret ${name}`, () =>
      cluster.admin.core.readNamespacedSecret({ name, namespace: ns }).catch(() => undefined),
    );

  /** A stack (file provider + replica a) and replica b beside it, both candidates for `lease`. */
  async function twoReplicas(lease: string, durations: [string, string, string]) {
    const stack: SyncControllerStack = await startSyncControllerStack(
      cluster,
      { password: 'pw' },
      electionArgs(lease, durations),
    );
    running.push(stack);
    const b = await startSyncControllerReplica(cluster, stack.providersDir, electionArgs(lease, durations), 'ssc-1');
    running.push(b.controller);
    const { value: leader } = await until('one replica leads', async () => {
      const [la, lb] = [await leading(stack), await leading(b)];
      return la + lb === 1 ? (la === 1 ? 'a' : 'b') : undefined;
    });
    return leader === 'a' ? { leader: stack as SyncControllerReplica, follower: b } : { leader: b, follower: stack };
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    leases = cluster.admin.config.makeApiClient(CoordinationV1Api);
    await installSyncControllerManifests(cluster, REPO);
    ns = await createNamespace(cluster, 'secretsync-le');
    await createSecretProviderClass(cluster, ns, 'db', {
      provider: 'file',
      parameters: { objects: JSON.stringify([{ objectName: 'password', sourcePath: 'password' }]) },
    });
  });

  afterEach(async () => {
    for (const r of running.splice(0).reverse()) await r.stop();
  });

  after(async () => {
    if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('one replica leads and syncs; the other waits, ready, and makes no SecretSync request', async () => {
    const lease = `ssc-le-${randomBytes(3).toString('hex')}`;
    const listsBefore = await secretSyncLists();
    const { leader, follower } = await twoReplicas(lease, ['15s', '10s', '1s']);
    await createSync('one');
    await untilSecret('one');
    // The leader keeps the Lease over several renewals (each a new renewTime, no transition).
    const first = await readLease(lease);
    const { value: held } = await until('three renewals', async () => {
      const now = await readLease(lease);
      return Date.parse(String(now.spec?.renewTime)) - Date.parse(String(first.spec?.renewTime)) >= 2500 && now;
    });
    expect(held.spec?.holderIdentity).to.equal(first.spec?.holderIdentity);
    expect(held.spec?.leaseTransitions).to.equal(first.spec?.leaseTransitions);
    expect(await leading(leader)).to.equal(1);
    expect(held.spec?.holderIdentity).to.match(/^ssc-[01]_[0-9a-f-]{36}$/);
    expect(held.spec?.leaseDurationSeconds).to.equal(15);
    expect(held.spec?.renewTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const followerMetrics = await follower.metrics();
    expect(metricSum(followerMetrics, 'secretsync_reconcile_total')).to.equal(0);
    expect(metricSum(await leader.metrics(), 'secretsync_reconcile_total')).to.be.greaterThan(0);
    // The follower only reads the Lease: it never lists SecretSyncs (the leader did, once) and writes nothing.
    expect((await secretSyncLists()) - listsBefore).to.equal(1);
    expect(metricSum(followerMetrics, 'rest_client_requests_total')).to.equal(
      metricSum(followerMetrics, 'rest_client_requests_total', ['method="GET"']),
    );
    expect(await follower.probe('/readyz')).to.equal(200);
    expect(await leader.probe('/readyz')).to.equal(200);
  });

  it('the leader killed: the follower takes over once the lease duration has passed, and syncs', async () => {
    const lease = `ssc-le-${randomBytes(3).toString('hex')}`;
    const { leader, follower } = await twoReplicas(lease, ['3s', '2s', '500ms']);
    const before = await readLease(lease);
    leader.controller.process.kill('SIGKILL');
    await until('the follower leads', async () => (await leading(follower)) === 1);
    const after = await readLease(lease);
    expect(after.spec?.holderIdentity).to.not.equal(before.spec?.holderIdentity);
    expect(after.spec?.leaseTransitions).to.equal((before.spec?.leaseTransitions ?? 0) + 1);
    // Not before the dead leader's last renewal had expired (as client-go: a whole lease duration).
    const lastRenewal = Date.parse(String(before.spec?.renewTime));
    expect(Date.parse(String(after.spec?.acquireTime)) - lastRenewal).to.be.at.least(3000 - 50);
    await createSync('after-kill');
    await untilSecret('after-kill');
  });

  it('the leader stopped (SIGTERM) releases the Lease: the follower takes over at its next try', async () => {
    const lease = `ssc-le-${randomBytes(3).toString('hex')}`;
    // A lease of 60 s: a takeover before it expired can only come from the release.
    const { leader, follower } = await twoReplicas(lease, ['60s', '40s', '1s']);
    const stoppedAt = Date.now();
    expect(await leader.controller.stop()).to.equal(0);
    expect(leader.controller.stderr()).to.match(/released the Lease/);
    await until('the follower leads', async () => (await leading(follower)) === 1, 30_000);
    const after: V1Lease = await readLease(lease);
    expect(Date.parse(String(after.spec?.acquireTime)) - stoppedAt).to.be.below(30_000);
    await createSync('after-stop');
    await untilSecret('after-stop');
  });

  it('the Lease taken by someone else: the leader gives up within its renew deadline and exits 1', async () => {
    const lease = `ssc-le-${randomBytes(3).toString('hex')}`;
    const { leader, follower } = await twoReplicas(lease, ['4s', '3s', '500ms']);
    const exited = new Promise<number | null>((resolve) => leader.controller.process.once('exit', resolve));
    const current = await readLease(lease);
    await leases.replaceNamespacedLease({
      name: lease,
      namespace: LEASE_NS,
      body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 3600 } },
    });
    expect(await exited).to.equal(1);
    expect(leader.controller.stderr()).to.match(/leadership lost: the Lease was not renewed within the renew deadline/);
    expect(leader.controller.stderr()).to.match(/leader election lost: exiting/);
    // The intruder's Lease has not expired: the follower keeps waiting.
    expect(await leading(follower)).to.equal(0);
    expect((await readLease(lease)).spec?.holderIdentity).to.equal('intruder');
  });
});
