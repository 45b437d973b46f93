import { expect } from 'chai';
import { AppsV1Api } from '@kubernetes/client-node';
import {
  startControllerManager,
  untilGarbageCollectorWorks,
  type ControllerManager,
} from '../support/controller-manager.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { statusOf, until } from '../support/until.js';

// every pod that mounts a class makes sure its owner is among the synced
// Secret's owner references, adding without removing others, so the real garbage
// collector deletes the Secret only when its last owner is gone. Two drivers (two nodes)
// publish at once: optimistic concurrency keeps both owners.

describe('synced Secret owners under the real garbage collector (kube-controller-manager), two nodes', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let manager: ControllerManager;
  let nodeA: DriverStack;
  let nodeB: DriverStack;
  let apps: AppsV1Api;
  let ns: string;
  const uids: Record<string, string> = {};

  async function replicaSetWithPod(name: string): Promise<void> {
    const rs = await apps.createNamespacedReplicaSet({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
        },
      },
    });
    uids[name] = rs.metadata?.uid ?? '';
    // No ReplicaSet controller runs: the test makes the pod a Deployment's ReplicaSet would.
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: `${name}-pod`,
          labels: { app: name },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'ReplicaSet',
              name,
              uid: uids[name],
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    uids[`${name}-pod`] = pod.metadata?.uid ?? '';
  }

  const secret = () => cluster.admin.core.readNamespacedSecret({ name: 'shared-secret', namespace: ns });
  const ownerNames = async () => ((await secret()).metadata?.ownerReferences ?? []).map((o) => o.name).sort();
  const gone = (read: () => Promise<unknown>) => async () =>
    read().then(
      () => false,
      (err: unknown) => statusOf(err) === 404,
    );

  before(async () => {
    cluster = await sharedKubeCluster();
    apps = cluster.admin.config.makeApiClient(AppsV1Api);
    ns = await createNamespace(cluster, 'owners');
    manager = await startControllerManager(cluster, [
      'garbage-collector-controller',
      'clusterrole-aggregation-controller',
    ]);
    await untilGarbageCollectorWorks(cluster, ns, manager);
    await createSecretProviderClass(cluster, ns, 'shared', {
      provider: 'file',
      parameters: { objects: '- objectName: token\n' },
      secretObjects: [{ secretName: 'shared-secret', type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] }],
    });
    await replicaSetWithPod('web-old');
    await replicaSetWithPod('web-new');
    nodeA = await startDriverStack({ kubeconfig: cluster.driverKubeconfig, providerFiles: { token: 't1' } });
    nodeB = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      providerFiles: { token: 't1' },
      driverArgs: ['--nodeid=node-b'],
    });
  });
  after(async () => {
    await nodeA?.stop();
    await nodeB?.stop();
    await manager?.stop();
  });

  it('two pods of two ReplicaSets publishing at once on two nodes: the Secret has both owners', async () => {
    await Promise.all([
      nodeA.client.publish(nodeA.request(nodeA.targetPath('old'), 'shared', 'web-old-pod', ns, uids['web-old-pod'])),
      nodeB.client.publish(nodeB.request(nodeB.targetPath('new'), 'shared', 'web-new-pod', ns, uids['web-new-pod'])),
    ]);
    expect(await ownerNames()).to.deep.equal(['web-new', 'web-old']);
    const owners = (await secret()).metadata?.ownerReferences ?? [];
    expect(owners.map((o) => [o.kind, o.uid]).sort()).to.deep.equal(
      [
        ['ReplicaSet', uids['web-new']],
        ['ReplicaSet', uids['web-old']],
      ].sort(),
    );
  });

  it('a republish whose owner is already there writes nothing', async () => {
    const version = (await secret()).metadata?.resourceVersion;
    await nodeA.client.publish(
      nodeA.request(nodeA.targetPath('old'), 'shared', 'web-old-pod', ns, uids['web-old-pod']),
    );
    expect((await secret()).metadata?.resourceVersion).to.equal(version);
  });

  it('deleting one ReplicaSet (background) leaves the Secret, owned by the other', async () => {
    await apps.deleteNamespacedReplicaSet({ name: 'web-old', namespace: ns, propagationPolicy: 'Background' });
    // The collector has processed the deletion: the old pod is gone, and the Secret lost the dangling owner.
    await until(
      "the old ReplicaSet's pod to be collected",
      gone(() => cluster.admin.core.readNamespacedPod({ name: 'web-old-pod', namespace: ns })),
    );
    await until(
      'the garbage collector to drop the deleted owner from the Secret',
      async () => JSON.stringify(await ownerNames()) === JSON.stringify(['web-new']),
    );
    expect(Buffer.from((await secret()).data?.['token'] ?? '', 'base64').toString()).to.equal('t1');
  });

  it('deleting the last ReplicaSet lets the garbage collector delete the Secret', async () => {
    await apps.deleteNamespacedReplicaSet({ name: 'web-new', namespace: ns, propagationPolicy: 'Background' });
    await until('the Secret to be collected', gone(secret));
  });
});
