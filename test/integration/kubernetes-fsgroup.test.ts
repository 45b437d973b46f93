import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, readdirSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { CAN_MOUNT, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { createNamespace, readManifests, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';

// fsGroup ownership in Kubernetes mode (issue 10 item 13), against the real kube-apiserver:
// the CSIDriver object an upgrader changes, and rotation rebuilding the pod's fsGroup.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const GROUP = { group: 'secrets-store.csi.x-k8s.io', version: 'v1' };
const FS_GROUP = 44001;
const POD_USER = 44101;

interface CsiDriverObject { apiVersion: string; kind: string; metadata: { name: string; resourceVersion?: string }; spec: Record<string, unknown> }

/** Runs `cat path` as uid/gid (no supplementary groups): exit code and output. */
async function readAs(path: string, uid: number, gid: number): Promise<{ code: number | null; out: string }> {
  const child = spawn('cat', [path], { uid, gid, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const [code] = await once(child, 'exit') as [number | null];
  return { code, out };
}

/** Groups of everything at and below `dir` other than `gid` (links not followed; the record excluded). */
function notInGroup(dir: string, gid: number, rel = '.'): string[] {
  const s = lstatSync(join(dir, rel));
  const own = s.gid === gid ? [] : [rel];
  if (!s.isDirectory()) return own;
  return [...own, ...readdirSync(join(dir, rel)).sort().flatMap((n) => notInGroup(dir, gid, rel === '.' ? n : `${rel}/${n}`))];
}

describe('CSIDriver fsGroupPolicy for upgraders (real kube-apiserver)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  // Not the driver's own name: other tests share the cluster and its CSIDriver object.
  const name = 'fsgroup-upgrade.csi.example.com';

  before(async () => { cluster = await sharedKubeCluster(); });
  after(async () => { await cluster?.admin.objects.delete({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name } } as never).catch(() => undefined); });

  it('turns upstream v1.6.0\'s CSIDriver (fsGroupPolicy unset) into ours in place: fsGroupPolicy is mutable here', async () => {
    // Upstream's deploy/csidriver.yaml, field by field.
    const upstream = { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name },
      spec: { podInfoOnMount: true, attachRequired: false, volumeLifecycleModes: ['Ephemeral'], requiresRepublish: true } };
    const created = await cluster.admin.objects.create(upstream as never) as unknown as CsiDriverObject;
    expect(created.spec['fsGroupPolicy'], 'the API server default').to.equal('ReadWriteOnceWithFSType');
    const ours = (await readManifests(join(REPO, 'deploy/csidriver.yaml')))[0] as unknown as CsiDriverObject;
    const replaced = await cluster.admin.objects.replace({ ...ours, metadata: { name, resourceVersion: created.metadata.resourceVersion } } as never) as unknown as CsiDriverObject;
    expect(replaced.spec['fsGroupPolicy']).to.equal('File');
    // The fields that are immutable are the ones ours keeps equal to upstream's.
    const err = await cluster.admin.objects.replace({ ...replaced, spec: { ...replaced.spec, attachRequired: true } } as never).then(() => undefined, (e: { code?: number; body?: unknown }) => e);
    expect(err?.code).to.equal(422);
    expect(JSON.stringify(err?.body)).to.match(/field is immutable/);
  });
});

(CAN_MOUNT ? describe : describe.skip)('fsGroup ownership through Kubernetes-mode rotation (real kube-apiserver, file provider)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let ns: string;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'fsgroup');
    // As the other rotation tests create it (shared cluster): the driver reads its tokenRequests.
    await cluster.admin.objects.create({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: 'secrets-store.csi.k8s.io' },
      spec: { podInfoOnMount: true, attachRequired: false, volumeLifecycleModes: ['Ephemeral'], tokenRequests: [{ audience: 'vault-test' }] } } as never).catch(() => undefined);
    await cluster.admin.custom.createNamespacedCustomObject({ ...GROUP, namespace: ns, plural: 'secretproviderclasses', body: {
      apiVersion: 'secrets-store.csi.x-k8s.io/v1', kind: 'SecretProviderClass', metadata: { name: 'db' },
      spec: { provider: 'file', parameters: { objects: '- objectName: password\n  mode: "0440"\n' } },
    } });
    stack = await startDriverStack({ kubeconfig: cluster.driverKubeconfig, providerFiles: { password: 'v1' },
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'] });
  });
  after(async () => { await stack?.stop(); });

  it('a rotation rebuilds the volume_mount_group from the pod\'s securityContext.fsGroup', async () => {
    const pod = await cluster.admin.core.createNamespacedPod({ namespace: ns, body: {
      metadata: { name: 'app' },
      spec: {
        // On the driver's node, so the driver's pod watch (slimmed) is what rotation reads.
        nodeName: 'test-node',
        securityContext: { runAsUser: POD_USER, runAsGroup: FS_GROUP, fsGroup: FS_GROUP, fsGroupChangePolicy: 'OnRootMismatch' },
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'secrets', csi: { driver: 'secrets-store.csi.k8s.io', readOnly: true, volumeAttributes: { secretProviderClass: 'db' } } }],
      },
    } });
    const target = stack.targetPath('app');
    await chmod(stack.work, 0o755);
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    // As kubelet publishes for this pod: its fsGroup as volume_mount_group.
    const request: NodePublishVolumeRequest = stack.request(target, 'db', 'app', ns, pod.metadata?.uid);
    await stack.client.publish({ ...request, volume_capability: { ...request.volume_capability, mount: { volume_mount_group: String(FS_GROUP) } } });
    expect(await readAs(join(target, 'password'), POD_USER, FS_GROUP)).to.deep.equal({ code: 0, out: 'v1' });

    await writeFile(join(stack.providerRoot, 'password'), 'v2');
    await logged(stack.driver, /"message":"volume rotated"/, count(stack.driver, /"message":"volume rotated"/) + 1);
    expect(await readAs(join(target, 'password'), POD_USER, FS_GROUP)).to.deep.equal({ code: 0, out: 'v2' });
    expect(notInGroup(target, FS_GROUP)).to.deep.equal([]);
    expect((await readAs(join(target, 'password'), POD_USER + 1, FS_GROUP + 1)).code).to.not.equal(0);
    await stack.client.unpublish('vol-app', target);
  });
});
