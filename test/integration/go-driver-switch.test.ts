import { expect } from 'chai';
import { lstat, mkdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import { CsiClient } from '../../bin/csi-client.js';
import { mountsUnder } from '../support/driver-stack.js';
import { goDriverUnavailable, startGoDriverStack, type GoDriverStack } from '../support/go-driver.js';
import type { InlinePod } from '../support/inline-pod.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';
import { until } from '../support/until.js';

/**
 * The rolling update of the driver DaemonSet from upstream's image to ours, on one node:
 * the real Go driver v1.6.1 mounts a volume and syncs its Secret, stops, and our driver
 * starts on the same node, sockets and pod status objects (docs/upgrading-from-upstream.md).
 */
describe("switching a node from upstream's Go driver v1.6.1 to ours (real Go driver, then our driver, kube-apiserver)", function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: GoDriverStack;
  let ours: Child | undefined;
  let client: CsiClient | undefined;
  let ns: string;
  let pod: InlinePod;

  const podStatus = () => readPodStatus(cluster, ns, pod.name, 'app');
  async function secretToken(): Promise<string | undefined> {
    const secret = await cluster.admin.core
      .readNamespacedSecret({ name: 'app-secret', namespace: ns })
      .catch(() => undefined);
    const data = secret?.data?.['token'];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString();
  }

  before(async function () {
    const unavailable = goDriverUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the Go driver switch test: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'switch');
    await createSecretProviderClass(cluster, ns, 'app', {
      provider: 'file',
      parameters: { objects: '- objectName: token\n  sourcePath: token\n' },
      secretObjects: [{ secretName: 'app-secret', type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] }],
    });
    stack = await startGoDriverStack({
      cluster,
      providers: [
        {
          name: 'file',
          args: (work) => [`--root=${join(work, 'file-root')}`, `--hmac-key-file=${join(work, 'hmac.key')}`],
        },
      ],
      async prepare(work) {
        await mkdir(join(work, 'file-root'));
        await writeFile(join(work, 'file-root/token'), 'v1');
      },
    });
    pod = await stack.pod({ namespace: ns, name: 'app', spc: 'app' });
  });
  after(async () => {
    client?.close();
    await ours?.stop();
    await stack?.stop();
  });

  it('the Go driver mounts the volume (no .metadata) and syncs its Secret', async () => {
    await stack.client.publish(await pod.publishRequest());
    expect(await readFile(join(pod.targetPath, 'token'), 'utf8')).to.equal('v1');
    expect(
      await lstat(join(pod.targetPath, '.metadata')).then(
        () => 'present',
        () => 'absent',
      ),
    ).to.equal('absent');
    await until('the Go driver to sync app-secret', async () => (await secretToken()) === 'v1');
  });

  it('our driver, started in its place, refreshes the volume in its first rotation round: same mount, .metadata added, the pod status object kept', async () => {
    stack.client.close();
    await stack.driver.stop();
    // What the DaemonSet's rolling update does: the same node name, CSI socket and provider directory.
    ours = await startCli(
      [
        'driver',
        `--endpoint=unix://${join(stack.work, 'csi.sock')}`,
        `--nodeid=${stack.nodeName}`,
        `--kubeconfig=${cluster.driverKubeconfig}`,
        `--provider-volume=${join(stack.work, 'providers')}`,
        '--additional-provider-volume-paths=',
        '--metrics-addr=127.0.0.1:0',
        '--enable-secret-rotation',
        '--rotation-poll-interval=1s',
      ],
      /driver started/,
    );
    client = new CsiClient(join(stack.work, 'csi.sock'));
    const versions = await until(
      '.metadata/versions.json in the volume the Go driver mounted',
      async () =>
        JSON.parse(await readFile(join(pod.targetPath, '.metadata/versions.json'), 'utf8')) as {
          objects: { id: string; version: string }[];
        },
    );
    expect(await readFile(join(pod.targetPath, 'token'), 'utf8')).to.equal('v1');
    expect(await readlink(join(pod.targetPath, '.metadata'))).to.equal('..data/.metadata');
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([pod.targetPath]);
    const status = await podStatus();
    expect(status.metadata.labels['internal.secrets-store.csi.k8s.io/node-name']).to.equal(stack.nodeName);
    expect(status.status.objects).to.deep.equal(versions.value.objects);
  });

  it('rotates the content and the Secret the Go driver created (it carries the managed label)', async () => {
    await writeFile(join(stack.work, 'file-root/token'), 'v2');
    await until('the rotated file', async () => (await readFile(join(pod.targetPath, 'token'), 'utf8')) === 'v2');
    await until('the rotated Secret', async () => (await secretToken()) === 'v2');
  });

  it("answers kubelet's republish", async () => {
    await client?.publish(await pod.publishRequest());
    expect(await readFile(join(pod.targetPath, 'token'), 'utf8')).to.equal('v2');
  });

  it('rolls back to the Go driver: it takes the volume our driver mounted and rotated, republishes and unpublishes it', async () => {
    // What a rollback of the DaemonSet does on the node (docs/upgrading-from-upstream.md#going-back-to-the-go-driver).
    client?.close();
    client = undefined;
    await ours?.stop();
    ours = undefined;
    await stack.restartDriver();
    const republish = new CsiClient(join(stack.work, 'csi.sock'));
    try {
      await republish.publish(await pod.publishRequest());
      expect(await readFile(join(pod.targetPath, 'token'), 'utf8'), 'the content stays').to.equal('v2');
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([pod.targetPath]);
      expect(await secretToken(), 'the synced Secret stays').to.equal('v2');
      await republish.unpublish(pod.volumeId, pod.targetPath);
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    } finally {
      republish.close();
    }
  });
});
