import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { auditedCalls, boundIdentity, clusterRolesIn, type BoundIdentity } from '../support/rbac-identity.js';
import { createPodWithVolumes, deployFile } from '../support/rbac-scenario.js';

// Issue 30: a node's driver holds and receives only the SecretProviderClasses and
// Secrets of the namespaces its volumes are in. A driver with rotation (reconciler) and
// Secret sync, bound by deploy/'s roles, publishes one volume in its namespace while
// another namespace has classes and used=true Secrets; the audit log shows every class
// and Secret request it made, each in its own namespace, none cluster-wide.

describe("Kubernetes mode watches only its volumes' namespaces (real kube-apiserver, audit log)", function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let identity: BoundIdentity | undefined;
  let stack: DriverStack | undefined;
  let own: string;
  let other: string;

  /** A class and a used=true Secret for nodePublishSecretRef in `namespace`. */
  async function classAndSecret(namespace: string): Promise<void> {
    await createSecretProviderClass(cluster, namespace, 'plain', {
      provider: 'file',
      parameters: { objects: '- objectName: a\n' },
      secretObjects: [{ secretName: 'synced', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }] }],
    });
    await cluster.admin.core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name: 'creds', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: { token: 'not-a-real-credential' },
      },
    });
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    own = await createNamespace(cluster, 'scope-own');
    other = await createNamespace(cluster, 'scope-other');
    await classAndSecret(own);
    await classAndSecret(other);
  });
  after(async () => {
    await stack?.stop();
    await identity?.remove();
  });

  it('classes, nodePublishSecretRef Secrets and synced Secrets are listed and watched in its namespace only, one Secret watch for both', async () => {
    const roles = await clusterRolesIn(['rbac.yaml', 'rbac-rotation.yaml', 'rbac-secret-sync.yaml'].map(deployFile));
    identity = await boundIdentity(cluster, 'scope', roles);
    stack = await startDriverStack({
      kubeconfig: identity.kubeconfig,
      driverArgs: [
        '--enable-secret-rotation',
        '--rotation-mode=reconciler',
        '--rotation-poll-interval=1s',
        '--enable-secret-sync',
      ],
      providerFiles: { a: 'a1' },
    });
    const uid = await createPodWithVolumes(cluster, own, 'app', ['plain'], {}, 'creds');
    const target = stack.targetPath('app');
    await stack.client.publish(stack.request(target, 'plain', 'app', own, uid));
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('a1');
    // Rotation refreshes the volume (reading the class and the nodePublishSecretRef Secret) over several rounds.
    const rounds = countLogged(stack.driver, /"message":"rotation round done"/);
    await untilLogged(stack.driver, /"message":"rotation round done"/, rounds + 3);
    const calls = (await auditedCalls(cluster, identity.user)).filter(
      (c) => c.resource === 'secretproviderclasses' || c.resource === 'secrets',
    );
    const seen = new Set(calls.map((c) => `${c.verb} ${c.resource} ${c.namespace ?? '<all namespaces>'}`));
    // The class's and the Secrets' own namespace: lists and watches there, and the Secret sync's writes.
    for (const want of [
      `list secretproviderclasses ${own}`,
      `watch secretproviderclasses ${own}`,
      `list secrets ${own}`,
      `watch secrets ${own}`,
    ])
      expect(seen, want).to.include(want);
    expect(
      [...seen].filter((s) => !s.endsWith(` ${own}`)),
      'no request for another namespace or the whole cluster',
    ).to.deep.equal([]);
    // One Secret watch serves the nodePublishSecretRef Secret and the synced one (labelled used=true too).
    const synced = await cluster.admin.core.readNamespacedSecret({ namespace: own, name: 'synced' });
    expect(synced.metadata?.labels).to.include({
      'secrets-store.csi.k8s.io/managed': 'true',
      'secrets-store.csi.k8s.io/used': 'true',
    });
    const open = (await stack.metrics())
      .split('\n')
      .filter((l) => l.startsWith('kube_watches_open{') && !l.endsWith(' 0'))
      .map((l) => l.replace(/^kube_watches_open\{(.*)\} (\d+)$/, '$1 $2'))
      .sort();
    expect(open, 'watches open: 3 + the one namespace with volumes').to.deep.equal([
      'resource="pods",scope="cluster" 1',
      'resource="secretproviderclasses",scope="namespace" 1',
      'resource="secretproviderclasspodstatuses",scope="cluster" 1',
      'resource="secrets",scope="namespace" 1',
    ]);
    await stack.client.unpublish('vol-app', target);
  });
});
