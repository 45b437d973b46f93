import { expect } from 'chai';
import { join } from 'node:path';
import {
  createNamespace,
  readManifests,
  startKubeCluster,
  stopOnExit,
  type KubeCluster,
} from '../support/kube-cluster.js';
import { CHART_VALUE_SETS, RECOMMENDED_VALUES, UPSTREAM_DEFAULT_VALUES } from '../support/helm-value-sets.js';
import { parseDriverConfig } from '../../driver/config.js';
import {
  CHART_DIR,
  createHelm,
  expandArgs,
  parseManifests,
  podContainer,
  serverDryRunApply,
  type Helm,
  type Manifest,
} from '../support/helm.js';
import { requirePeer } from '../support/peers.js';
import { createSecretProviderClass } from '../support/kube-objects.js';

// The chart against a real kube-apiserver: every value set's objects through a server-side
// dry run, then helm install, upgrade and uninstall. A cluster of its own, without deploy/'s
// CRDs and RBAC: the chart's cluster-scoped objects (CRDs, ClusterRoles, CSIDriver) carry
// upstream's fixed names and would collide with the shared test cluster's.

const CRDS = [
  'secretproviderclasses.secrets-store.csi.x-k8s.io',
  'secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io',
];
const DRIVER_DS = 'csi-secrets-store-secrets-store-csi-driver';
const SECRETSYNC_CRD = 'secretsyncs.secret-sync.x-k8s.io';

/** The identity of an object, as KubernetesObjectApi.read takes it. */
interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}
const crdRef = (name: string): ObjectRef => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name },
});
const clusterRoleRef = (name: string): ObjectRef => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name },
});
const CSI_DRIVER: ObjectRef = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSIDriver',
  metadata: { name: 'secrets-store.csi.k8s.io' },
};
const driverDsRef = (namespace: string): ObjectRef => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: DRIVER_DS, namespace },
});
const refOf = (obj: Manifest): ObjectRef => ({
  apiVersion: obj.apiVersion ?? '',
  kind: obj.kind ?? '',
  metadata: {
    name: obj.metadata?.name ?? '',
    ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
  },
});

/** What an upstream user's values file typically holds: upstream v1.6.1 key names, our image. */
const UPSTREAM_USER_VALUES = {
  linux: {
    image: { repository: 'registry.example.com/mirror/secrets-store-csi-driver', tag: '0.1.0', pullPolicy: 'Always' },
    crds: { enabled: true, image: { repository: 'registry.example.com/mirror/driver-crds', tag: 'v1.6.1' } },
    kubeletRootDir: '/var/lib/kubelet',
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'secrets', effect: 'NoSchedule' }],
    nodeSelector: { 'kubernetes.io/arch': 'amd64' },
    priorityClassName: 'system-node-critical',
    podAnnotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' },
    driver: { resources: { requests: { cpu: '50m', memory: '100Mi' }, limits: { cpu: '200m', memory: '200Mi' } } },
    registrar: { logVerbosity: 5 },
  },
  syncSecret: { enabled: true },
  enableSecretRotation: true,
  rotationPollInterval: '120s',
  tokenRequests: [{ audience: 'api://AzureADTokenExchange' }],
  logVerbosity: 2,
  logFormatJSON: true,
  providerHealthCheck: true,
  providerHealthCheckInterval: '1m',
  rbac: { install: true, pspEnabled: true },
  imagePullSecrets: [{ name: 'mirror-pull' }],
  commonLabels: { team: 'platform' },
};

describe('Helm chart against a real kube-apiserver', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let helm: Helm;

  /** GET an object: undefined when it does not exist. */
  async function get(ref: ObjectRef): Promise<Manifest | undefined> {
    return cluster.admin.objects.read(ref).then(
      (o) => o as Manifest,
      (err: { code?: number }) => {
        if (err.code === 404) return undefined;
        throw err;
      },
    );
  }

  before(async () => {
    cluster = await startKubeCluster({ installManifests: false });
    stopOnExit(cluster);
    helm = createHelm(join(cluster.dir, 'kubeconfig'));
  });

  after(async () => {
    helm?.cleanup();
    await cluster?.stop();
  });

  describe('server-side dry run (dryRun=All, fieldValidation=Strict) of every value set', () => {
    let namespace: string;
    before(async () => {
      namespace = await createNamespace(cluster, 'helm-dry');
    });

    for (const set of CHART_VALUE_SETS) {
      it(`${set.name}: the API server accepts every rendered object`, async () => {
        const objects = await helm.template(set.values, { namespace });
        expect(objects.length).to.be.greaterThan(5);
        for (const obj of objects) await serverDryRunApply(cluster, obj);
      });
    }
  });

  describe('helm install, upgrade and uninstall', () => {
    afterEach(async () => {
      // Leave no release behind for the next test, even after a failure.
      const { stdout } = await helm.run(['list', '--all-namespaces', '--all', '-o', 'json']);
      for (const r of JSON.parse(stdout) as { name: string; namespace: string }[])
        await helm.run(['uninstall', r.name, '-n', r.namespace]);
    });

    it("installs deploy/'s setup (RECOMMENDED_VALUES) in a fresh namespace, upgrades a changed value into the DaemonSet, and uninstall removes all but the CRDs", async () => {
      const ns = await createNamespace(cluster, 'helm');
      const recommended = ['-f', helm.valuesFile(RECOMMENDED_VALUES)];
      const install = await helm.run(['install', 'csi-secrets-store', CHART_DIR, '-n', ns, ...recommended]);
      expect(install.stdout).to.match(/STATUS: deployed/);
      expect(install.stdout).to.not.match(/WARNING/);
      const rendered = parseManifests((await helm.run(['get', 'manifest', 'csi-secrets-store', '-n', ns])).stdout);
      expect(rendered.map((o) => o.kind).sort()).to.include.members([
        'CSIDriver',
        'ClusterRole',
        'ClusterRoleBinding',
        'CustomResourceDefinition',
        'DaemonSet',
        'ServiceAccount',
      ]);
      for (const obj of rendered) {
        const live = await get(refOf(obj));
        expect(live, `${obj.kind} ${obj.metadata?.name} exists`).to.not.equal(undefined);
        expect(
          live?.metadata?.annotations?.['meta.helm.sh/release-namespace'],
          `${obj.kind} ${obj.metadata?.name}`,
        ).to.equal(ns);
      }
      const before = await get(driverDsRef(ns));
      expect(
        (before?.['spec'].template.spec.volumes as { hostPath?: { path: string } }[]).map((v) => v.hostPath?.path),
      ).to.include('/var/lib/kubelet/pods');
      expect((await get(CSI_DRIVER))?.['spec'].requiresRepublish).to.equal(false);

      await helm.run([
        'upgrade',
        'csi-secrets-store',
        CHART_DIR,
        '-n',
        ns,
        '--reuse-values',
        '--set',
        'linux.kubeletRootDir=/var/lib/k0s/kubelet',
        '--set',
        'rotationMode=republish',
      ]);
      const after = await get(driverDsRef(ns));
      expect(after?.metadata?.generation).to.be.greaterThan(before?.metadata?.generation ?? 0);
      const volumes = (after?.['spec'].template.spec.volumes as { hostPath?: { path: string } }[]).map(
        (v) => v.hostPath?.path,
      );
      expect(volumes).to.include('/var/lib/k0s/kubelet/pods').and.not.include('/var/lib/kubelet/pods');
      const args = after?.['spec'].template.spec.containers.find((c: { name: string }) => c.name === 'secrets-store')
        .args as string[];
      expect(args).to.include('--rotation-mode=republish');
      expect((await get(CSI_DRIVER))?.['spec'].requiresRepublish).to.equal(true);
      // Republish mode needs no rotation role: the upgrade removed it.
      expect(await get(clusterRoleRef('secretproviderrotation-role'))).to.equal(undefined);
      expect((await helm.run(['history', 'csi-secrets-store', '-n', ns, '-o', 'json'])).stdout).to.match(
        /"revision":2/,
      );

      const uninstall = await helm.run(['uninstall', 'csi-secrets-store', '-n', ns]);
      expect(uninstall.stdout).to.match(/kept due to the resource policy/);
      for (const obj of rendered.filter((o) => o.kind !== 'CustomResourceDefinition')) {
        expect(await get(refOf(obj)), `${obj.kind} ${obj.metadata?.name} is gone`).to.equal(undefined);
      }
      for (const crd of CRDS) expect(await get(crdRef(crd)), `${crd} is kept`).to.not.equal(undefined);
    });

    it("installs with an upstream user's values: CRDs it does not own are left alone with a hand-over note, and ignored values are named", async () => {
      await makeCrdsUnowned();
      const ns = await createNamespace(cluster, 'helm-up');
      const install = await helm.run([
        'install',
        'csi-secrets-store',
        CHART_DIR,
        '-n',
        ns,
        '-f',
        helm.valuesFile(UPSTREAM_USER_VALUES),
      ]);
      expect(install.stdout).to.match(/STATUS: deployed/);
      expect(install.stdout)
        .to.match(/rbac\.pspEnabled/)
        .and.match(/logFormatJSON/)
        .and.match(/providerHealthCheck/);
      for (const crd of CRDS) {
        expect(install.stdout).to.include(
          `kubectl annotate crd ${crd} meta.helm.sh/release-name=csi-secrets-store meta.helm.sh/release-namespace=${ns}`,
        );
        expect((await get(crdRef(crd)))?.metadata?.labels?.['helm.sh/chart'], 'not taken over').to.equal(undefined);
      }
      const ds = await get(driverDsRef(ns));
      const spec = ds?.['spec'].template.spec;
      expect(spec.containers.find((c: { name: string }) => c.name === 'secrets-store').image).to.equal(
        'registry.example.com/mirror/secrets-store-csi-driver:0.1.0',
      );
      expect(spec.imagePullSecrets).to.deep.equal([{ name: 'mirror-pull' }]);
      expect(spec.tolerations).to.deep.equal(UPSTREAM_USER_VALUES.linux.tolerations);
      expect(ds?.metadata?.labels?.['team']).to.equal('platform');
      expect((await get(CSI_DRIVER))?.['spec'].tokenRequests).to.deep.equal([
        { audience: 'api://AzureADTokenExchange' },
      ]);
      // Upstream's RBAC and requiresRepublish for upstream's values: the driver then rotates on kubelet's republish.
      expect(await get(clusterRoleRef('secretproviderrotation-role')), "no rights beyond upstream's").to.equal(
        undefined,
      );
      expect((await get(CSI_DRIVER))?.['spec'].requiresRepublish).to.equal(true);

      // The hand-over the note prints, then an upgrade takes the CRDs over.
      for (const crd of CRDS) {
        await cluster.admin.objects.patch(
          {
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: {
              name: crd,
              labels: { 'app.kubernetes.io/managed-by': 'Helm' },
              annotations: { 'meta.helm.sh/release-name': 'csi-secrets-store', 'meta.helm.sh/release-namespace': ns },
            },
          },
          undefined,
          undefined,
          undefined,
          undefined,
          'application/merge-patch+json',
        );
      }
      const upgrade = await helm.run(['upgrade', 'csi-secrets-store', CHART_DIR, '-n', ns, '--reuse-values']);
      expect(upgrade.stdout).to.not.match(/already exist and are not managed/);
      for (const crd of CRDS) {
        const live = await get(crdRef(crd));
        expect(live?.metadata?.labels?.['helm.sh/chart']).to.equal('secrets-store-csi-0.1.0');
        expect(live?.metadata?.annotations?.['helm.sh/resource-policy']).to.equal('keep');
      }
    });
    it('installs the SecretSync controller (syncController.enabled) and uninstalls it but its CRD; a second release leaves that CRD, not its own, alone with a hand-over note', async () => {
      const ns = await createNamespace(cluster, 'helm-ssc');
      const values = ['-f', helm.valuesFile({ syncController: { enabled: true, tokenRequestAudience: ['vault'] } })];
      const install = await helm.run(['install', 'ssc', CHART_DIR, '-n', ns, ...values]);
      expect(install.stdout).to.match(/STATUS: deployed/);
      expect(install.stdout)
        .to.include('token audiences\n"vault"')
        .and.not.include(`kubectl annotate crd ${SECRETSYNC_CRD}`);
      const rendered = parseManifests((await helm.run(['get', 'manifest', 'ssc', '-n', ns])).stdout);
      const sync = rendered.filter((o) => /secretsync|sync-controller/.test(o.metadata?.name ?? ''));
      expect(sync).to.have.length(20);
      for (const obj of sync)
        expect(await get(refOf(obj)), `${obj.kind} ${obj.metadata?.name}`).to.not.equal(undefined);
      const policy = await get({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'secrets-store-sync-controller-validate-token-policy' },
      });
      expect(policy?.['spec'].matchConditions[0].expression).to.include(`system:serviceaccount:${ns}:`);

      await helm.run(['uninstall', 'ssc', '-n', ns]);
      for (const obj of sync.filter((o) => o.kind !== 'CustomResourceDefinition'))
        expect(await get(refOf(obj)), `${obj.kind} ${obj.metadata?.name} is gone`).to.equal(undefined);
      expect(await get(crdRef(SECRETSYNC_CRD)), 'the CRD is kept').to.not.equal(undefined);

      // Kept by the uninstalled release (as upstream's sync-controller chart leaves it: not this release's).
      const other = await createNamespace(cluster, 'helm-ssc-2');
      const dryRun = await helm.run(['install', 'ssc-2', CHART_DIR, '-n', other, '--dry-run=server', ...values]);
      const manifests = parseManifests(
        dryRun.stdout.slice(dryRun.stdout.indexOf('---'), dryRun.stdout.indexOf('NOTES:')),
      );
      expect(
        manifests.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata?.name),
      ).to.not.include(SECRETSYNC_CRD);
      expect(manifests.find((o) => o.kind === 'Deployment')?.metadata?.name).to.equal('secrets-store-sync-controller');
      expect(dryRun.stdout).to.include(
        `kubectl annotate crd ${SECRETSYNC_CRD} meta.helm.sh/release-name=ssc-2 meta.helm.sh/release-namespace=${other}`,
      );
      await cluster.admin.objects.delete(crdRef(SECRETSYNC_CRD));
    });

    it("warns when upstream's values file still points linux.image at upstream's Go image (dry run)", async () => {
      const ns = await createNamespace(cluster, 'helm-image');
      const { stdout } = await helm.run([
        'install',
        'csi-secrets-store',
        CHART_DIR,
        '-n',
        ns,
        '--dry-run=server',
        '-f',
        helm.valuesFile(UPSTREAM_DEFAULT_VALUES),
      ]);
      expect(stdout).to.match(
        /WARNING: linux\.image\.repository is upstream's Go driver image \(registry\.k8s\.io\/csi-secrets-store\/driver\)/,
      );
    });

    it("upgrades a release of upstream v1.6.1's own chart in place (same DaemonSet, our image and flags, upstream's CRDs left alone), and helm rollback goes back", async () => {
      const upstreamChart = requirePeer('UPSTREAM_CHART');
      await deleteCrds();
      const ns = await createNamespace(cluster, 'helm-from-upstream');
      const values = {
        syncSecret: { enabled: true },
        enableSecretRotation: true,
        rotationPollInterval: '120s',
        tokenRequests: [{ audience: 'vault' }],
      };
      // --no-hooks: upstream's CRD hook Jobs need a kubelet, and this cluster has none.
      await helm.run([
        'install',
        'csi-secrets-store',
        upstreamChart,
        '-n',
        ns,
        '--no-hooks',
        '-f',
        helm.valuesFile(values),
      ]);
      const before = await get(driverDsRef(ns));
      const csiDriverBefore = await get(CSI_DRIVER);
      const syncRoleBefore = await get(clusterRoleRef('secretprovidersyncing-role'));
      expect(podContainer(before as Manifest, 'secrets-store').image).to.equal(
        'registry.k8s.io/csi-secrets-store/driver:v1.6.1',
      );
      for (const crd of CRDS)
        expect((await get(crdRef(crd)))?.metadata?.annotations?.['controller-gen.kubebuilder.io/version'], crd).to.be.a(
          'string',
        );

      // --reuse-values renders our templates over upstream's chart defaults (none of our keys):
      // refused, naming the flag that keeps the user's values with our defaults.
      const image = ['--set', 'linux.image.repository=secrets-store-csi/driver', '--set', 'linux.image.tag=0.1.0'];
      const reused = await helm
        .run(['upgrade', 'csi-secrets-store', CHART_DIR, '-n', ns, '--reuse-values', ...image])
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(reused?.message).to.match(/--reuse-values[^]*--reset-then-reuse-values/);
      expect(
        podContainer((await get(driverDsRef(ns))) as Manifest, 'secrets-store').image,
        'the refused upgrade changed nothing',
      ).to.equal('registry.k8s.io/csi-secrets-store/driver:v1.6.1');
      await helm.run(['upgrade', 'csi-secrets-store', CHART_DIR, '-n', ns, '--reset-then-reuse-values', ...image]);
      const reset = parseDriverConfig(
        expandArgs(podContainer((await get(driverDsRef(ns))) as Manifest, 'secrets-store'), {
          KUBE_NODE_NAME: 'node-1',
        }),
        {},
      );
      expect(
        [reset.enableSecretSync, reset.enableSecretRotation, reset.rotationPollIntervalMs],
        'the values set at install, kept',
      ).to.deep.equal([true, true, 120_000]);

      const upgrade = await helm.run([
        'upgrade',
        'csi-secrets-store',
        CHART_DIR,
        '-n',
        ns,
        '-f',
        helm.valuesFile(values),
        '--set',
        'linux.image.repository=secrets-store-csi/driver',
        '--set',
        'linux.image.tag=0.1.0',
      ]);
      const after = await get(driverDsRef(ns));
      expect(after?.metadata?.uid, 'the same DaemonSet, updated in place').to.equal(before?.metadata?.uid);
      expect(after?.['spec'].selector).to.deep.equal(before?.['spec'].selector);
      const driver = podContainer(after as Manifest, 'secrets-store');
      expect(driver.image).to.equal('secrets-store-csi/driver:0.1.0');
      const config = parseDriverConfig(expandArgs(driver, { KUBE_NODE_NAME: 'node-1' }), {});
      expect(config.ignoredFlags).to.deep.equal([]);
      expect([config.enableSecretSync, config.enableSecretRotation, config.rotationPollIntervalMs]).to.deep.equal([
        true,
        true,
        120_000,
      ]);
      const csiDriver = await get(CSI_DRIVER);
      expect(csiDriver?.metadata?.uid, 'the same CSIDriver, updated in place').to.equal(csiDriverBefore?.metadata?.uid);
      // Upstream's CSIDriver and RBAC for upstream's values (our keys unset): the driver rotates on kubelet's republish.
      expect(csiDriver?.['spec']).to.deep.include({ requiresRepublish: true, tokenRequests: [{ audience: 'vault' }] });
      expect(csiDriver?.['spec'].fsGroupPolicy).to.not.equal('File');
      expect(await get(clusterRoleRef('secretproviderrotation-role')), "no rights beyond upstream's").to.equal(
        undefined,
      );
      expect((await get(clusterRoleRef('secretprovidersyncing-role')))?.['rules']).to.deep.equal([
        { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
      ]);
      for (const crd of CRDS) {
        expect(upgrade.stdout).to.include(`kubectl label crd ${crd} app.kubernetes.io/managed-by=Helm`);
        expect(
          (await get(crdRef(crd)))?.metadata?.annotations?.['controller-gen.kubebuilder.io/version'],
          `${crd} is still upstream's`,
        ).to.be.a('string');
      }

      // And back (docs/upgrading-from-upstream.md#going-back-to-the-go-driver): `helm rollback` to
      // the revision upstream's chart installed puts upstream's objects back in place.
      await createSecretProviderClass(cluster, ns, 'kept', { provider: 'file' });
      await helm.run(['rollback', 'csi-secrets-store', '1', '-n', ns, '--no-hooks']);
      const back = await get(driverDsRef(ns));
      expect(back?.metadata?.uid, 'the same DaemonSet, rolled back in place').to.equal(before?.metadata?.uid);
      const goDriver = podContainer(back as Manifest, 'secrets-store');
      expect(goDriver.image).to.equal('registry.k8s.io/csi-secrets-store/driver:v1.6.1');
      expect(goDriver.args, "upstream's flags only").to.deep.equal(
        podContainer(before as Manifest, 'secrets-store').args,
      );
      const csiDriverBack = await get(CSI_DRIVER);
      expect(csiDriverBack?.metadata?.uid).to.equal(csiDriverBefore?.metadata?.uid);
      expect(csiDriverBack?.['spec']).to.deep.equal(csiDriverBefore?.['spec']);
      expect((await get(clusterRoleRef('secretprovidersyncing-role')))?.['rules']).to.deep.equal(
        syncRoleBefore?.['rules'],
      );
      expect(await providerOfClass(ns, 'kept'), 'classes survive the rollback').to.equal('file');
    });

    it("goes back from a fresh install of our chart as documented: helm uninstall (CRDs and classes kept), then upstream v1.6.1's chart installs", async () => {
      const upstreamChart = requirePeer('UPSTREAM_CHART');
      const ns = await createNamespace(cluster, 'helm-fresh-back');
      const image = ['--set', 'linux.image.repository=secrets-store-csi/driver', '--set', 'linux.image.tag=0.1.0'];
      await helm.run(['install', 'csi-secrets-store', CHART_DIR, '-n', ns, ...image]);
      expect(podContainer((await get(driverDsRef(ns))) as Manifest, 'secrets-store').image).to.equal(
        'secrets-store-csi/driver:0.1.0',
      );
      await createSecretProviderClass(cluster, ns, 'kept', { provider: 'file' });

      await helm.run(['uninstall', 'csi-secrets-store', '-n', ns]);
      for (const crd of CRDS) expect(await get(crdRef(crd)), `${crd} kept by the uninstall`).to.not.equal(undefined);
      // --no-hooks: upstream's CRD hook Jobs need a kubelet, and this cluster has none.
      await helm.run(['install', 'csi-secrets-store', upstreamChart, '-n', ns, '--no-hooks']);
      const ds = (await get(driverDsRef(ns))) as Manifest;
      expect(podContainer(ds, 'secrets-store').image).to.equal('registry.k8s.io/csi-secrets-store/driver:v1.6.1');
      expect((await get(CSI_DRIVER))?.['spec'].fsGroupPolicy, "upstream's CSIDriver").to.not.equal('File');
      expect(await get(clusterRoleRef('secretproviderclasses-role'))).to.not.equal(undefined);
      expect(await providerOfClass(ns, 'kept'), 'classes survive the way back').to.equal('file');
    });
  });

  /** The provider a SecretProviderClass names (it must exist). */
  async function providerOfClass(namespace: string, name: string): Promise<string | undefined> {
    const spc = (await cluster.admin.objects.read({
      apiVersion: 'secrets-store.csi.x-k8s.io/v1',
      kind: 'SecretProviderClass',
      metadata: { name, namespace },
    })) as { spec?: { provider?: string } };
    return spc.spec?.provider;
  }

  /** Deletes our CRDs (they have no instances here) and waits until the API server has removed them. */
  async function deleteCrds(): Promise<void> {
    for (const crd of CRDS)
      await cluster.admin.objects.delete(crdRef(crd)).catch((err: { code?: number }) => {
        if (err.code !== 404) throw err;
      });
    // The apiextensions finaliser runs in the API server: poll the object, as waitForCrds does.
    for (let i = 0; i < 200; i++) {
      if ((await Promise.all(CRDS.map((crd) => get(crdRef(crd))))).every((o) => o === undefined)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('CRDs were not deleted within 10s');
  }

  /** Our CRDs as upstream's chart leaves them: present, without Helm's ownership metadata. */
  async function makeCrdsUnowned(): Promise<void> {
    for (const path of ['deploy/crds/secretproviderclasses.yaml', 'deploy/crds/secretproviderclasspodstatuses.yaml']) {
      for (const crd of await readManifests(join(CHART_DIR, '../..', path))) {
        if (await get(crdRef(crd.metadata?.name ?? ''))) {
          await cluster.admin.objects.patch(
            {
              apiVersion: crd.apiVersion,
              kind: crd.kind,
              metadata: {
                name: crd.metadata?.name,
                labels: { 'app.kubernetes.io/managed-by': null, 'helm.sh/chart': null },
                annotations: { 'meta.helm.sh/release-name': null, 'meta.helm.sh/release-namespace': null },
              },
            } as never,
            undefined,
            undefined,
            undefined,
            undefined,
            'application/merge-patch+json',
          );
        } else {
          await cluster.admin.objects.create(crd);
        }
      }
    }
  }
});
