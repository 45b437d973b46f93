import { expect } from 'chai';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { mountsUnder } from '../support/driver-stack.js';
import { E2E_IMAGE } from '../support/e2e-image.js';
import { skipUnlessE2eCapable, startE2eNode, type E2eNode } from '../support/e2e-node.js';
import { containerLog, csiPod, runPod, volumeTarget, writeProviderFile } from '../support/e2e-pods.js';
import { createNamespace } from '../support/kube-cluster.js';
import { createSecretProviderClass, SECRETS_STORE_GROUP } from '../support/kube-objects.js';
import { statusOf, until } from '../support/until.js';

// Through a real kubelet and containerd: a pod with a CSI
// inline volume of a file-provider class reaches Running; its container reads the secret
// file and an env var from the Secret the driver synced (secretKeyRef), and prints both to
// its log. Then the pod is deleted: kubelet calls NodeUnpublishVolume, the tmpfs is gone,
// and the garbage collector removes the pod's SecretProviderClassPodStatus.

const PASSWORD = 'e2e-file-secret-7f3a';

describe('end to end: a pod through kubelet and containerd reads its secret', function () {
  this.timeout(300_000);
  let node: E2eNode;
  let ns = '';
  let uid = '';

  before(async function () {
    await skipUnlessE2eCapable(this);
    node = await startE2eNode();
    process.stdout.write(`  e2e node up, driver registered ${node.registeredMs} ms after kubelet started\n`);
  });
  after(async () => {
    await node?.stop();
  });

  it('runs a pod whose container reads the mounted secret file and the synced Secret as an env var', async () => {
    const { cluster } = node;
    ns = await createNamespace(cluster, 'e2e');
    await writeProviderFile(node, 'db/password', PASSWORD);
    await createSecretProviderClass(cluster, ns, 'db', {
      provider: 'file',
      parameters: { objects: '- objectName: password\n  sourcePath: db/password\n' },
      secretObjects: [{ secretName: 'db-synced', type: 'Opaque', data: [{ objectName: 'password', key: 'password' }] }],
    });
    const created = Date.now();
    uid = await runPod(
      node,
      ns,
      csiPod(
        node,
        'reader',
        'db',
        'echo "file=$(cat /mnt/secrets-store/password)"; echo "env=$DB_PASSWORD"; exec sleep 2147483647',
        E2E_IMAGE,
        {
          env: [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db-synced', key: 'password' } } }],
        },
      ),
    );
    process.stdout.write(`      pod Running ${Date.now() - created} ms after creation\n`);
    const log = await until(
      'the container to log both values',
      async () => {
        const text = await containerLog(node, ns, 'reader', uid, 'app');
        return /^.*env=.*$/m.test(text) ? text : undefined;
      },
      30_000,
    );
    expect(log.value).to.include(`file=${PASSWORD}`);
    expect(log.value).to.include(`env=${PASSWORD}`);
  });

  it('unpublishes the volume when the pod is deleted: tmpfs gone, pod status object garbage-collected', async function () {
    if (!uid) this.skip();
    const { cluster } = node;
    const target = volumeTarget(node, uid, 'secrets');
    expect(await mountsUnder(target), 'mounted while the pod runs').to.deep.equal([target]);
    const statuses = async () =>
      (
        (await cluster.admin.custom.listNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasspodstatuses',
        })) as { items: { metadata: { name: string } }[] }
      ).items.map((i) => i.metadata.name);
    expect(await statuses(), 'the pod status object exists').to.have.length(1);
    const unpublished = countLogged(node.stack.driver, /"message":"volume unpublished"/);
    const deleted = Date.now();
    await cluster.admin.core.deleteNamespacedPod({ namespace: ns, name: 'reader' });
    await until(
      'the pod object to go (kubelet confirms the deletion)',
      async () =>
        cluster.admin.core.readNamespacedPod({ namespace: ns, name: 'reader' }).then(
          () => false,
          (err: unknown) => statusOf(err) === 404,
        ),
      60_000,
    );
    process.stdout.write(`      pod gone ${Date.now() - deleted} ms after deletion\n`);
    await untilLogged(node.stack.driver, /"message":"volume unpublished"/, unpublished + 1);
    expect(node.stack.driver.stderr()).to.include(`"targetPath":"${target}"`);
    expect(await mountsUnder(target), 'tmpfs unmounted').to.deep.equal([]);
    await until('the pod status object to be garbage-collected', async () => (await statuses()).length === 0, 60_000);
  });
});
