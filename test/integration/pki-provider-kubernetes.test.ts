import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { caSecret, makeTestCa, opensslDir, opensslVerify } from '../support/pki-test-ca.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';
import { createTestCsiDriver, createSecretProviderClass } from '../support/kube-objects.js';

// The pki provider behind our driver in Kubernetes mode (real kube-apiserver and etcd),
// rotation every second: the CA Secret named by the pod's nodePublishSecretRef is edited
// in place through the API, as an operator runs the two-phase CA rotation, and the driver's
// rotation rounds (which read that Secret themselves) carry each step into the volume:
// the bundle gains the new CA, then leaves come from the new CA, then the old CA is gone.

describe('pki provider in Kubernetes mode: a two-phase CA rotation by editing the CA Secret', function () {
  this.timeout(300_000);
  const D = 24 * 3600;
  const now = Math.floor(Date.now() / 1000);
  const oldCa = makeTestCa('old CA', 'EC-P256', now - 100 * D, now + 300 * D);
  const newCa = makeTestCa('new CA', 'RSA-2048', now - D, now + 700 * D);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ProviderProcess;
  let ns: string;
  let uid: string;

  async function setCaSecret(data: Record<string, string>): Promise<void> {
    await cluster.admin.core.replaceNamespacedSecret({
      name: 'web-ca',
      namespace: ns,
      body: {
        metadata: { name: 'web-ca', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: data,
      },
    });
  }

  /** Waits, round after round, until `check` holds. */
  async function untilRound(check: () => Promise<boolean>): Promise<void> {
    while (!(await check()))
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        count(stack.driver, /"message":"rotation round done"/) + 1,
      );
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'pki');
    // The shared cluster's one CSIDriver, the same whichever test creates it first.
    await createTestCsiDriver(cluster);
    await createSecretProviderClass(cluster, ns, 'web-cert', {
      provider: 'pki',
      parameters: {
        commonName: '${POD_NAME}.${POD_NAMESPACE}',
        dnsNames: '${POD_NAME}.${POD_NAMESPACE}.svc',
        duration: '24h',
      },
    });
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'web-ca', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: caSecret([oldCa], oldCa),
      },
    });
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          nodeName: 'test-node',
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'tls',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'web-cert' },
                nodePublishSecretRef: { name: 'web-ca' },
              },
            },
          ],
        },
      },
    });
    uid = pod.metadata?.uid ?? '';
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s', '--log-level=info'],
    });
    provider = await startProviderProcess(
      'pki',
      ['--health-addr=127.0.0.1:0'],
      {},
      { providersDir: stack.providersDir },
    );
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
  });

  it('carries each step of the rotation into the volume; leaves of both CAs verify with the bundle meanwhile', async () => {
    const target = stack.targetPath('web');
    // kubelet's publish carries the Secret's data.
    await stack.client.publish({
      ...stack.request(target, 'web-cert', 'web', ns, uid),
      secrets: caSecret([oldCa], oldCa),
    });
    const leaf = async () => new X509Certificate(await readFile(join(target, 'tls.crt')));
    const bundle = () => readFile(join(target, 'ca.crt'), 'utf8');
    expect((await leaf()).subject).to.equal(`CN=web.${ns}`);
    expect(await bundle()).to.equal(oldCa.certPem);

    // Phase 1: the new CA joins ca.crt, ca.key stays the old one.
    await setCaSecret(caSecret([oldCa, newCa], oldCa));
    await untilRound(async () => (await bundle()) === oldCa.certPem + newCa.certPem);
    expect((await leaf()).issuer).to.equal('CN=old CA');
    const oldLeaf = await readFile(join(target, 'tls.crt'));

    // Phase 2: ca.key switches to the new CA.
    await setCaSecret(caSecret([oldCa, newCa], newCa));
    await untilRound(async () => (await leaf()).issuer === 'CN=new CA');
    expect(await bundle()).to.equal(oldCa.certPem + newCa.certPem);
    const dir = await opensslDir();
    try {
      const both = await dir.write('both.crt', await bundle());
      expect(
        (await opensslVerify(both, await dir.write('new.crt', await readFile(join(target, 'tls.crt'))))).output,
      ).to.include(': OK');
      expect((await opensslVerify(both, await dir.write('old.crt', oldLeaf))).output).to.include(': OK');
    } finally {
      await dir.done();
    }

    // Rounds with nothing to do keep the files.
    const kept = await readFile(join(target, 'tls.crt'));
    const rounds = count(stack.driver, /"message":"rotation round done"/);
    await logged(stack.driver, /"message":"rotation round done"/, rounds + 2);
    expect((await readFile(join(target, 'tls.crt'))).equals(kept)).to.equal(true);

    // Phase 3: the old CA is removed from ca.crt.
    await setCaSecret(caSecret([newCa], newCa));
    await untilRound(async () => (await bundle()) === newCa.certPem);
    const metrics = await provider.metrics();
    expect(metrics.get('pki_mount_decisions_total{decision="bundle-changed"}')).to.be.at.least(2);
    expect(metrics.get('pki_mount_decisions_total{decision="signer-changed"}')).to.be.at.least(1);
    expect(metrics.get('pki_mount_decisions_total{decision="keep"}')).to.be.at.least(2);
  });
});
