import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { startControllerManager, type ControllerManager } from '../support/controller-manager.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { clientsAs } from '../support/rbac-identity.js';
import { until } from '../support/until.js';
import { SECRETS_STORE_GROUP } from '../support/kube-objects.js';

/** The HTTP status a client-node call failed with (its ApiException `code`), or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw err;
  }
}

describe('aggregated SecretProviderClass roles for namespace users (real kube-apiserver, clusterrole-aggregation controller)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let manager: ControllerManager;
  let ns: string;
  const rbac = () => cluster.admin.config.makeApiClient(RbacAuthorizationV1Api);

  /** Waits until the aggregation controller copied our rules into the built-in role (polls the API). */
  async function untilAggregated(role: string, resource: string, verb: string): Promise<void> {
    const aggregated = async () =>
      ((await rbac().readClusterRole({ name: role })).rules ?? []).some(
        (r) =>
          r.apiGroups?.includes(SECRETS_STORE_GROUP.group) && r.resources?.includes(resource) && r.verbs.includes(verb),
      );
    try {
      await until(`${role} to get ${verb} ${resource}`, aggregated, 60_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}; kube-controller-manager log:\n${await manager.logTail()}`, {
        cause: err,
      });
    }
  }

  async function bind(user: string, role: string): Promise<void> {
    await rbac().createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: `${user}-${role}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
  }

  const spc = (name: string) => ({
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    metadata: { name },
    spec: { provider: 'file', parameters: { objects: '- objectName: a\n' } },
  });
  const podStatus = (name: string) => ({
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClassPodStatus',
    metadata: { name },
    status: { podName: 'p', secretProviderClassName: 'c', mounted: true, targetPath: '/t', objects: [] },
  });

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'aggregate');
    manager = await startControllerManager(cluster, ['clusterrole-aggregation-controller']);
    await untilAggregated('admin', 'secretproviderclasses', 'create');
    await untilAggregated('edit', 'secretproviderclasses', 'create');
    await untilAggregated('view', 'secretproviderclasses', 'list');
    await untilAggregated('view', 'secretproviderclasspodstatuses', 'list');
    await bind('ns-admin', 'admin');
    await bind('ns-editor', 'edit');
    await bind('ns-viewer', 'view');
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasspodstatuses',
      body: podStatus('existing'),
    });
  });
  after(async () => {
    await manager?.stop();
  });

  it('a namespace admin and editor create, update and delete SecretProviderClasses in their namespace', async () => {
    for (const user of ['ns-admin', 'ns-editor']) {
      const as = clientsAs(cluster, user);
      expect(
        await outcome(
          as.custom.createNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasses',
            body: spc(`by-${user}`),
          }),
        ),
        user,
      ).to.equal('ok');
      expect(
        await outcome(
          as.custom.patchNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasses',
            name: `by-${user}`,
            body: [{ op: 'add', path: '/metadata/labels', value: { team: 'a' } }],
          }),
        ),
        user,
      ).to.equal('ok');
      expect(
        await outcome(
          as.custom.listNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasses',
          }),
        ),
        user,
      ).to.equal('ok');
      expect(
        await outcome(
          as.custom.deleteNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasses',
            name: `by-${user}`,
          }),
        ),
        user,
      ).to.equal('ok');
    }
  });

  it('a namespace viewer gets and lists SecretProviderClasses and pod statuses, and cannot create or change them', async () => {
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      body: spc('shared'),
    });
    const as = clientsAs(cluster, 'ns-viewer');
    expect(
      await outcome(
        as.custom.getNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasses',
          name: 'shared',
        }),
      ),
    ).to.equal('ok');
    expect(
      await outcome(
        as.custom.listNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasses',
        }),
      ),
    ).to.equal('ok');
    expect(
      await outcome(
        as.custom.listNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasspodstatuses',
        }),
      ),
    ).to.equal('ok');
    expect(
      await outcome(
        as.custom.createNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasses',
          body: spc('by-viewer'),
        }),
      ),
    ).to.equal(403);
    expect(
      await outcome(
        as.custom.deleteNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasses',
          name: 'shared',
        }),
      ),
    ).to.equal(403);
  });

  it('only the driver writes pod statuses: namespace admins read them and cannot create them', async () => {
    for (const user of ['ns-admin', 'ns-editor', 'ns-viewer']) {
      const as = clientsAs(cluster, user);
      expect(
        await outcome(
          as.custom.getNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasspodstatuses',
            name: 'existing',
          }),
        ),
        user,
      ).to.equal('ok');
      expect(
        await outcome(
          as.custom.createNamespacedCustomObject({
            ...SECRETS_STORE_GROUP,
            namespace: ns,
            plural: 'secretproviderclasspodstatuses',
            body: podStatus(`by-${user}`),
          }),
        ),
        user,
      ).to.equal(403);
    }
  });

  it('grants nothing outside the namespace of the binding', async () => {
    const other = await createNamespace(cluster, 'aggregate-other');
    const as = clientsAs(cluster, 'ns-admin');
    expect(
      await outcome(
        as.custom.listNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: other,
          plural: 'secretproviderclasses',
        }),
      ),
    ).to.equal(403);
    expect(
      await outcome(
        as.custom.createNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: other,
          plural: 'secretproviderclasses',
          body: spc('x'),
        }),
      ),
    ).to.equal(403);
  });
});
