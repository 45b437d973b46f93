// The kustomize / plain-manifests way back to the Go driver, exactly as
// docs/upgrading-from-upstream.md ("Going back to the Go driver") documents it, run with a
// real kubectl (peer KUBECTL) against a real kube-apiserver: upstream v1.6.1's deploy/
// manifests (peer UPSTREAM_MANIFESTS, the files the documented URLs serve), then ours with
// `kubectl apply -k deploy/`, then upstream's applied over ours and our extra objects
// deleted. A cluster of its own: the manifests' cluster-scoped names would collide with the
// shared test cluster's.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import {
  createNamespace,
  readManifests,
  startKubeCluster,
  stopOnExit,
  type KubeCluster,
} from '../support/kube-cluster.js';
import { REPO } from '../support/deploy-manifests.js';
import { podContainer, type Manifest } from '../support/helm.js';
import { createSecretProviderClass, SECRETS_STORE_GROUP } from '../support/kube-objects.js';
import { requirePeer } from '../support/peers.js';
import { until } from '../support/until.js';

const UPSTREAM_FILES = [
  'rbac-secretproviderclass.yaml',
  'rbac-secretprovidersyncing.yaml',
  'csidriver.yaml',
  'secrets-store-csi-driver.yaml',
];
const UPSTREAM_CRDS = [
  'secrets-store.csi.x-k8s.io_secretproviderclasses.yaml',
  'secrets-store.csi.x-k8s.io_secretproviderclasspodstatuses.yaml',
];

describe('kustomize rollback to the Go driver (kubectl, upstream v1.6.1 deploy/ manifests)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let kubectlBin: string;
  let upstream: string;

  function kubectl(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        kubectlBin,
        [`--kubeconfig=${join(cluster.dir, 'kubeconfig')}`, ...args],
        { cwd: REPO, maxBuffer: 8 << 20 },
        (err, stdout, stderr) => (err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout)),
      );
    });
  }

  async function get(kind: string, name: string, namespace?: string): Promise<Manifest | undefined> {
    const out = await kubectl([
      'get',
      kind,
      name,
      '-o',
      'json',
      '--ignore-not-found',
      ...(namespace ? ['-n', namespace] : []),
    ]);
    return out.trim() ? (JSON.parse(out) as Manifest) : undefined;
  }

  async function upstreamObject(file: string, kind: string): Promise<Manifest> {
    const found = (await readManifests(join(upstream, file))).find((o) => o.kind === kind);
    if (!found) throw new Error(`no ${kind} in upstream's ${file}`);
    return found as Manifest;
  }

  before(async () => {
    kubectlBin = requirePeer('KUBECTL');
    upstream = requirePeer('UPSTREAM_MANIFESTS');
    cluster = await startKubeCluster({ installManifests: false });
    stopOnExit(cluster);
  });

  after(async () => {
    await cluster?.stop();
  });

  it('upstream → ours (kubectl apply -k deploy/) → upstream (the documented apply and delete): upstream objects again, classes kept', async () => {
    // The starting point: upstream's driver from its deploy/ manifests.
    await kubectl(['apply', ...[...UPSTREAM_CRDS, ...UPSTREAM_FILES].flatMap((f) => ['-f', join(upstream, f)])]);
    const dsBefore = await get('daemonset', 'csi-secrets-store', 'kube-system');
    const ns = await createNamespace(cluster, 'kustomize-rollback');
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    await until('the SecretProviderClass created', () =>
      createSecretProviderClass(cluster, ns, 'kept', { provider: 'file', parameters: { objects: '' } }).then(
        () => true,
      ),
    );

    // The switch (docs: "In short", step 2).
    await kubectl(['apply', '-k', 'deploy/']);
    const ours = await get('daemonset', 'csi-secrets-store', 'kube-system');
    expect(ours?.metadata?.uid, 'the same DaemonSet, replaced in place').to.equal(dsBefore?.metadata?.uid);
    expect(podContainer(ours as Manifest, 'secrets-store').image).to.match(/^secrets-store-csi\/driver:/);
    expect(await get('clusterrole', 'secretproviderrotation-role')).to.not.equal(undefined);

    // The way back, as documented (local copies of the documented URLs).
    await kubectl(['apply', ...UPSTREAM_FILES.flatMap((f) => ['-f', join(upstream, f)])]);
    await kubectl([
      'delete',
      ...[
        'deploy/rbac-rotation.yaml',
        'deploy/rbac-workload-restart.yaml',
        'deploy/provider-file-daemonset.yaml',
      ].flatMap((f) => ['-f', f]),
      '--ignore-not-found',
    ]);

    const back = (await get('daemonset', 'csi-secrets-store', 'kube-system')) as Manifest;
    expect(back.metadata?.uid, 'still the same DaemonSet').to.equal(dsBefore?.metadata?.uid);
    const want = await upstreamObject('secrets-store-csi-driver.yaml', 'DaemonSet');
    for (const name of ['secrets-store', 'node-driver-registrar', 'liveness-probe']) {
      const got = podContainer(back, name);
      const exp = podContainer(want, name);
      expect([got['image'], got['args']], name).to.deep.equal([exp['image'], exp['args']]);
    }
    expect(
      (back['spec'].template.spec.containers as { name: string }[]).map((c) => c.name).sort(),
      "upstream's containers only",
    ).to.deep.equal((want['spec'].template.spec.containers as { name: string }[]).map((c) => c.name).sort());

    const csiDriver = (await get('csidriver', 'secrets-store.csi.k8s.io')) as Manifest;
    expect(csiDriver['spec']).to.deep.include((await upstreamObject('csidriver.yaml', 'CSIDriver'))['spec']);
    for (const [file, role] of [
      ['rbac-secretproviderclass.yaml', 'secretproviderclasses-role'],
      ['rbac-secretprovidersyncing.yaml', 'secretprovidersyncing-role'],
    ] as const) {
      const wantRole = (await readManifests(join(upstream, file))).find(
        (o) => o.kind === 'ClusterRole' && o.metadata?.name === role,
      ) as Manifest;
      expect((await get('clusterrole', role))?.['rules'], role).to.deep.equal(wantRole['rules']);
    }
    expect(await get('clusterrole', 'secretproviderrotation-role'), 'our rotation role deleted').to.equal(undefined);
    expect(await get('daemonset', 'csi-secrets-store-provider-file', 'kube-system'), 'our provider deleted').to.equal(
      undefined,
    );

    // The CRDs still serve (each apply above changed them: the API server answers 429
    // "storage is (re)initializing" until a changed CRD's storage is back), and the class
    // made before the switch is there.
    const classes = await until('the SecretProviderClass CRD serving', async () =>
      (
        (await cluster.admin.custom.listNamespacedCustomObject({
          ...SECRETS_STORE_GROUP,
          namespace: ns,
          plural: 'secretproviderclasses',
        })) as { items: { metadata: { name: string } }[] }
      ).items.map((c) => c.metadata.name),
    );
    expect(classes.value).to.deep.equal(['kept']);
    await until('the SecretProviderClassPodStatus CRD serving', () =>
      cluster.admin.custom.listClusterCustomObject({
        ...SECRETS_STORE_GROUP,
        plural: 'secretproviderclasspodstatuses',
      }),
    );
  });
});
