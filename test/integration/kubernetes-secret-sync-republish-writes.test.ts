// Upstream v1.6.1's fix, held by our driver: a synced Secret is not rewritten on every
// republish. Upstream v1.6.0's SecretProviderClassPodStatus controller did a Create and,
// on AlreadyExists, an Update of every synced Secret on every reconcile; v1.6.1 reads the
// Secret and writes (a merge PATCH) only when its data differ. Here kubelet's periodic
// republishes of an unchanged volume are repeated against our driver and the Secret writes
// it makes are counted in the kube-apiserver's audit log (start-cluster.sh), not inferred
// from resourceVersions.
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createBarePod, createSecretProviderClass } from '../support/kube-objects.js';
import { auditedCalls, boundIdentity, clusterRolesIn, type BoundIdentity } from '../support/rbac-identity.js';
import { deployFile } from '../support/rbac-scenario.js';
import { until } from '../support/until.js';

const REPUBLISHES = 5;
const WRITES = new Set(['create', 'update', 'patch']);

describe('Secret sync: an unchanged republish writes no Secret (upstream v1.6.1 fix; audit log count)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let identity: BoundIdentity;
  let stack: DriverStack | undefined;
  let ns: string;

  /** The driver's writes of Secret `name` so far, as the API server audited them. */
  async function secretWrites(name: string): Promise<string[]> {
    const calls = await auditedCalls(cluster, identity.user);
    return calls
      .filter((c) => c.resource === 'secrets' && c.namespace === ns && c.name === name && WRITES.has(c.verb))
      .map((c) => `${c.verb} ${c.code}`);
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    identity = await boundIdentity(
      cluster,
      'republish-writes',
      await clusterRolesIn([deployFile('rbac.yaml'), deployFile('rbac-secret-sync.yaml')]),
    );
    ns = await createNamespace(cluster, 'republish-writes');
    stack = await startDriverStack({
      kubeconfig: identity.kubeconfig,
      // Only kubelet's republishes (no rotation reconciler) touch the volume here.
      driverArgs: ['--enable-secret-sync', '--enable-secret-rotation=false'],
      providerFiles: { 'db/password': 'hunter2' },
    });
  });

  after(async () => {
    await stack?.stop();
    await identity?.remove();
  });

  it(`creates the Secret once, writes nothing on ${REPUBLISHES} unchanged republishes, and one write when the data change`, async () => {
    const live = stack as DriverStack;
    await createSecretProviderClass(cluster, ns, 'app', {
      provider: 'file',
      parameters: { objects: '- objectName: db-password\n  sourcePath: db/password\n' },
      secretObjects: [{ secretName: 'app-secret', type: 'Opaque', data: [{ objectName: 'db-password', key: 'p' }] }],
    });
    const uid = await createBarePod(cluster, ns, 'web');
    const target = live.targetPath('web');
    const request = () => live.request(target, 'app', 'web', ns, uid);

    await live.client.publish(request());
    await until('the first sync in the audit log', async () => (await secretWrites('app-secret')).length > 0);
    expect(await secretWrites('app-secret'), 'the first publish').to.deep.equal(['create 201']);

    for (let i = 0; i < REPUBLISHES; i++) await live.client.publish(request());

    // A marker: the data change, and the next republish must write exactly once. Once its
    // write is audited, every earlier republish's requests (answered before it) are too.
    await writeFile(join(live.providerRoot, 'db/password'), 'correct horse');
    await live.client.publish(request());
    await until('the changed data written', async () => (await secretWrites('app-secret')).length > 1);
    const writes = await secretWrites('app-secret');
    expect(writes.slice(1), `writes after the first sync (${REPUBLISHES} unchanged republishes, then one change)`)
      .to.have.length(1)
      .and.to.satisfy((w: string[]) => /^(update|patch) 200$/.test(w[0] ?? ''));
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'app-secret', namespace: ns });
    expect(Buffer.from(secret.data?.['p'] ?? '', 'base64').toString()).to.equal('correct horse');

    await live.client.unpublish(`vol-web`, target);
  });

  it(`a Secret synced before used=true (upstream's: managed=true only) is labelled with one PATCH, then ${REPUBLISHES} republishes write nothing`, async () => {
    const live = stack as DriverStack;
    await writeFile(join(live.providerRoot, 'db/password'), 'hunter2');
    await createSecretProviderClass(cluster, ns, 'old', {
      provider: 'file',
      parameters: { objects: '- objectName: db-password\n  sourcePath: db/password\n' },
      secretObjects: [{ secretName: 'old-secret', type: 'Opaque', data: [{ objectName: 'db-password', key: 'p' }] }],
    });
    // As upstream v1.6.1 leaves it: its label, its data, a label of the user's.
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'old-secret', labels: { 'secrets-store.csi.k8s.io/managed': 'true', team: 'blue' } },
        type: 'Opaque',
        data: { p: Buffer.from('hunter2').toString('base64') },
      },
    });
    const before = await cluster.admin.core.readNamespacedSecret({ name: 'old-secret', namespace: ns });
    const uid = await createBarePod(cluster, ns, 'old-web');
    const target = live.targetPath('old-web');
    const request = () => live.request(target, 'old', 'old-web', ns, uid);

    await live.client.publish(request());
    await until('the label written', async () => (await secretWrites('old-secret')).includes('patch 200'));
    for (let i = 0; i < REPUBLISHES; i++) await live.client.publish(request());
    await writeFile(join(live.providerRoot, 'db/password'), 'correct horse');
    await live.client.publish(request());
    await until('the changed data written', async () => (await secretWrites('old-secret')).includes('update 200'));
    // When the namespace's used=true watch has listed, it does not hold the Secret, so the
    // driver's create is refused (409) before the GET that finds it ours; before, the GET comes first.
    const writes = await secretWrites('old-secret');
    expect(writes.filter((w) => w !== 'create 409')).to.deep.equal(['patch 200', 'update 200']);
    expect(writes.filter((w) => w === 'create 409').length, 'refused creates').to.be.at.most(1);
    const after = await cluster.admin.core.readNamespacedSecret({ name: 'old-secret', namespace: ns });
    expect(after.metadata?.labels).to.deep.equal({
      'secrets-store.csi.k8s.io/managed': 'true',
      'secrets-store.csi.k8s.io/used': 'true',
      team: 'blue',
    });
    expect(after.metadata?.uid, 'the same Secret, not a new one').to.equal(before.metadata?.uid);
    expect(Buffer.from(after.data?.['p'] ?? '', 'base64').toString()).to.equal('correct horse');

    await live.client.unpublish(`vol-old-web`, target);
  });
});
