import { expect } from 'chai';
import { failure } from '../support/call-outcome.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createBarePod, createSecretProviderClass } from '../support/kube-objects.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';

// Names that are not Kubernetes object names never reach an API URL: "." and ".." in a
// path are resolved by URL parsing, so "." would have addressed the list of every class
// (or Secret) of the namespace and ".." the namespace itself.

describe('Kubernetes mode refuses names that are not object names (real kube-apiserver)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let ns: string;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'names');
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-sync'],
      providerFiles: { user: 'alice' },
    });
    await createSecretProviderClass(cluster, ns, 'dot-secret', {
      provider: 'file',
      parameters: { objects: '- objectName: user\n' },
      secretObjects: [{ secretName: '.', data: [{ objectName: 'user', key: 'u' }] }],
    });
  });
  after(async () => {
    await stack?.stop();
  });

  for (const name of ['.', '..', 'Upper']) {
    it(`refuses the volume attribute secretProviderClass ${JSON.stringify(name)} with INVALID_ARGUMENT naming it`, async () => {
      const pod = await cluster.admin.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: `p-${name === 'Upper' ? 'upper' : name.length}` },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        },
      });
      const err = await failure(
        stack.client.publish(
          stack.request(stack.targetPath(`spc-${pod.metadata?.name}`), name, pod.metadata?.name, ns, pod.metadata?.uid),
        ),
      );
      expect(err.code).to.equal('INVALID_ARGUMENT');
      expect(err.message).to.include(
        `invalid SecretProviderClass name ${JSON.stringify(name)}: must be a DNS-1123 subdomain`,
      );
    });
  }

  // A sync problem, so it never fails the mount once sync failures don't: the
  // FailedToCreateSecret event says why either way.
  it('refuses the secretObjects secretName "." before any Secret request, in a FailedToCreateSecret event', async () => {
    const uid = await createBarePod(cluster, ns, 'p-secret');
    // The mount itself succeeds: a bad Secret name is the sync's problem, not the volume's.
    await stack.client.publish(stack.request(stack.targetPath('dot-secret'), 'dot-secret', 'p-secret', ns, uid));
    const events = await cluster.admin.core.listNamespacedEvent({ namespace: ns });
    const failed = events.items
      .filter((e) => e.reason === 'FailedToCreateSecret' && e.involvedObject.name === 'p-secret')
      .map((e) => e.message ?? '');
    expect(
      failed.some((m) =>
        m.includes(`failed to sync Secret ${ns}/.: invalid Secret name ".": must be a DNS-1123 subdomain`),
      ),
      failed.join('\n'),
    ).to.equal(true);
  });
});
