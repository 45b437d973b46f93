import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import { CAN_MOUNT, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { createNamespace, readManifests, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, createTestCsiDriver } from '../support/kube-objects.js';
import { notInGroup, readAs, reachableTarget, withGroup } from '../support/mount-group.js';

// fsGroup ownership in Kubernetes mode, against the real kube-apiserver:
// the CSIDriver object an upgrader changes, and rotation rebuilding the pod's fsGroup.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FS_GROUP = 44001;
const POD_USER = 44101;

interface CsiDriverObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string };
  spec: Record<string, unknown>;
}

describe('CSIDriver fsGroupPolicy for upgraders (real kube-apiserver)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  // Not the driver's own name: other tests share the cluster and its CSIDriver object.
  const name = 'fsgroup-upgrade.csi.example.com';

  before(async () => {
    cluster = await sharedKubeCluster();
  });
  after(async () => {
    await cluster?.admin.objects
      .delete({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name } } as never)
      .catch(() => undefined);
  });

  it("turns upstream v1.6.1's CSIDriver (fsGroupPolicy unset) into ours in place: fsGroupPolicy is mutable here", async () => {
    // Upstream's deploy/csidriver.yaml, field by field.
    const upstream = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name },
      spec: {
        podInfoOnMount: true,
        attachRequired: false,
        volumeLifecycleModes: ['Ephemeral'],
        requiresRepublish: true,
      },
    };
    const created = (await cluster.admin.objects.create(upstream as never)) as unknown as CsiDriverObject;
    expect(created.spec['fsGroupPolicy'], 'the API server default').to.equal('ReadWriteOnceWithFSType');
    const ours = (await readManifests(join(REPO, 'deploy/csidriver.yaml')))[0] as unknown as CsiDriverObject;
    const replaced = (await cluster.admin.objects.replace({
      ...ours,
      metadata: { name, resourceVersion: created.metadata.resourceVersion },
    } as never)) as unknown as CsiDriverObject;
    expect(replaced.spec['fsGroupPolicy']).to.equal('File');
    // The fields that are immutable are the ones ours keeps equal to upstream's.
    const err = await cluster.admin.objects
      .replace({ ...replaced, spec: { ...replaced.spec, attachRequired: true } } as never)
      .then(
        () => undefined,
        (e: { code?: number; body?: unknown }) => e,
      );
    expect(err?.code).to.equal(422);
    expect(JSON.stringify(err?.body)).to.match(/field is immutable/);
  });
});

(CAN_MOUNT ? describe : describe.skip)(
  'fsGroup ownership through Kubernetes-mode rotation (real kube-apiserver, file provider)',
  function () {
    this.timeout(300_000);
    let cluster: KubeCluster;
    let stack: DriverStack;
    let ns: string;

    before(async () => {
      cluster = await sharedKubeCluster();
      ns = await createNamespace(cluster, 'fsgroup');
      // As the other rotation tests create it (shared cluster): the driver reads its tokenRequests.
      await createTestCsiDriver(cluster);
      await createSecretProviderClass(cluster, ns, 'db', {
        provider: 'file',
        parameters: { objects: '- objectName: password\n  mode: "0440"\n' },
      });
      stack = await startDriverStack({
        kubeconfig: cluster.driverKubeconfig,
        providerFiles: { password: 'v1' },
        driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
      });
    });
    after(async () => {
      await stack?.stop();
    });

    it("a rotation rebuilds the volume_mount_group from the pod's securityContext.fsGroup", async () => {
      const pod = await cluster.admin.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'app' },
          spec: {
            // On the driver's node, so the driver's pod watch (slimmed) is what rotation reads.
            nodeName: 'test-node',
            securityContext: {
              runAsUser: POD_USER,
              runAsGroup: FS_GROUP,
              fsGroup: FS_GROUP,
              fsGroupChangePolicy: 'OnRootMismatch',
            },
            containers: [{ name: 'c', image: 'busybox' }],
            volumes: [
              {
                name: 'secrets',
                csi: {
                  driver: 'secrets-store.csi.k8s.io',
                  readOnly: true,
                  volumeAttributes: { secretProviderClass: 'db' },
                },
              },
            ],
          },
        },
      });
      const target = await reachableTarget(stack, 'app');
      // As kubelet publishes for this pod: its fsGroup as volume_mount_group.
      await stack.client.publish(
        withGroup(stack.request(target, 'db', 'app', ns, pod.metadata?.uid), String(FS_GROUP)),
      );
      expect(await readAs(join(target, 'password'), POD_USER, FS_GROUP)).to.deep.equal({ code: 0, out: 'v1' });

      await writeFile(join(stack.providerRoot, 'password'), 'v2');
      await logged(stack.driver, /"message":"volume rotated"/, count(stack.driver, /"message":"volume rotated"/) + 1);
      expect(await readAs(join(target, 'password'), POD_USER, FS_GROUP)).to.deep.equal({ code: 0, out: 'v2' });
      expect(notInGroup(target, FS_GROUP)).to.deep.equal([]);
      expect((await readAs(join(target, 'password'), POD_USER + 1, FS_GROUP + 1)).code).to.not.equal(0);
      await stack.client.unpublish('vol-app', target);
    });
  },
);
