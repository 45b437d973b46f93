import { expect } from 'chai';
import { parseSyncControllerConfig } from '../../sync-controller/config.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { mergeValues, RECOMMENDED_VALUES } from '../support/helm-value-sets.js';
import {
  CHART_DIR,
  RENDER_KUBE_VERSION,
  createHelm,
  expandArgs,
  findManifest,
  podContainer,
  serverDryRunApply,
  type Helm,
  type Manifest,
} from '../support/helm.js';
import type { Obj } from '../support/deploy-manifests.js';

// syncController.* of the chart rendered by the real helm: off, it renders nothing of the
// SecretSync controller; on, the objects pass the API server's server-side validation
// and say what the values ask, read with the controller's own flag parser. That they are
// deploy/sync-controller/'s objects: helm-chart-deploy.test.ts.

const NAMESPACE = 'secrets-store';
const SA_USER = `system:serviceaccount:${NAMESPACE}:secrets-store-sync-controller`;
const POLICY_KINDS = ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];

/** The objects of the SecretSync controller among rendered ones. */
const syncObjects = (objects: readonly Manifest[]) =>
  objects.filter(
    (o) =>
      POLICY_KINDS.includes(o.kind ?? '') ||
      o.kind === 'Deployment' ||
      /secretsync|sync-controller/.test(o.metadata?.name ?? ''),
  );

/** The controller's flags as kubelet passes them: $(TOKEN_REQUEST_AUDIENCE) from the ConfigMap the env names. */
function controllerArgs(objects: readonly Manifest[]): string[] {
  const deployment = findManifest(objects, 'Deployment', 'secrets-store-sync-controller');
  const controller = podContainer(deployment, 'controller');
  const ref = ((controller['env'] ?? []) as Obj[]).find((e) => e['name'] === 'TOKEN_REQUEST_AUDIENCE')?.['valueFrom']
    ?.configMapKeyRef as { name: string; key: string };
  const config = findManifest(objects, 'ConfigMap', ref.name);
  return expandArgs(controller, { TOKEN_REQUEST_AUDIENCE: (config['data'] as Record<string, string>)[ref.key] ?? '' });
}

describe('Helm chart: syncController (real helm)', function () {
  this.timeout(120_000);
  let helm: Helm;

  before(() => {
    helm = createHelm();
  });
  after(() => helm?.cleanup());

  it('renders none of it by default, with upstream-style or with deploy/ values', async () => {
    for (const values of [{}, RECOMMENDED_VALUES]) {
      const objects = await helm.template(values, { namespace: NAMESPACE });
      expect(objects.length).to.be.greaterThan(5);
      expect(syncObjects(objects).map((o) => `${o.kind}/${o.metadata?.name}`)).to.deep.equal([]);
    }
  });

  it("renders with the defaults deploy/sync-controller's setup in the release namespace: flags parse, policies bind its ServiceAccount", async () => {
    const values = { syncController: { enabled: true } };
    await helm.run([
      'lint',
      '--strict',
      '--kube-version',
      RENDER_KUBE_VERSION,
      CHART_DIR,
      '-f',
      helm.valuesFile(values),
    ]);
    const objects = await helm.template(values, { namespace: NAMESPACE });
    const sync = syncObjects(objects);
    expect(sync).to.have.length(20);
    expect(JSON.stringify(sync)).to.not.include('kube-system');
    const config = parseSyncControllerConfig(controllerArgs(objects), {});
    expect(config).to.include({
      providerDir: '/provider',
      metricsAddr: ':8085',
      healthProbeAddr: ':8081',
      rotationPollIntervalMs: 12 * 3600_000,
    });
    expect(config.audiences).to.deep.equal([]);
    expect(config.leaderElection?.namespace, 'the Lease in the pod namespace: the release namespace').to.equal('');
    const deployment = findManifest(objects, 'Deployment', 'secrets-store-sync-controller');
    expect(deployment['spec'].replicas).to.equal(2);
    expect(deployment['spec'].strategy.type).to.equal('RollingUpdate');
    const leaseRole = findManifest(objects, 'Role', 'secrets-store-sync-controller-leader-election');
    expect(leaseRole['metadata']?.namespace).to.equal(NAMESPACE);
    expect(deployment['spec'].template.spec.serviceAccountName).to.equal('secrets-store-sync-controller');
    expect(podContainer(deployment, 'provider-file')['args']).to.include('--endpoint=unix:///provider/file.sock');
    const policies = sync.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
    expect(policies).to.have.length(6);
    for (const p of policies)
      expect(p['spec'].matchConditions[0].expression).to.equal(`request.userInfo.username == '${SA_USER}'`);
    for (const b of sync.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding'))
      if (b['spec'].paramRef) expect(b['spec'].paramRef.namespace).to.equal(NAMESPACE);
  });

  it('renders the values: audiences (upstream shape or strings), interval, ports, replicas, image, providers, policies off', async () => {
    const objects = await helm.template(
      {
        syncController: {
          enabled: true,
          replicas: 1,
          leaderElect: false,
          tokenRequestAudience: [{ audience: 'vault' }, 'api://app', { audience: null }],
          rotationPollInterval: '5m',
          metricsPort: 9085,
          healthPort: 9081,
          extraArgs: ['--log-level=debug'],
          image: { repository: 'registry.example.com/ssc/provider', digest: 'sha256:' + 'ab'.repeat(32) },
          providers: { file: { enabled: false } },
          providerContainer: [
            {
              name: 'provider-vault',
              image: 'registry.example.com/ssc/provider:1',
              args: ['vault', '--endpoint=unix:///provider/vault.sock'],
              volumeMounts: [{ name: 'providers', mountPath: '/provider' }],
            },
          ],
          validatingAdmissionPolicies: { applyPolicies: false, allowedSecretTypes: ['Opaque'] },
        },
      },
      { namespace: NAMESPACE },
    );
    const config = parseSyncControllerConfig(controllerArgs(objects), {});
    expect(config.audiences).to.deep.equal(['vault', 'api://app']);
    expect(config).to.include({ rotationPollIntervalMs: 300_000, metricsAddr: ':9085', healthProbeAddr: ':9081' });
    expect(config.logLevel).to.equal('debug');
    expect(config.leaderElection).to.equal(undefined);
    const deployment = findManifest(objects, 'Deployment', 'secrets-store-sync-controller');
    expect(deployment['spec'].replicas).to.equal(1);
    expect(deployment['spec'].strategy.type).to.equal('Recreate');
    const pod = deployment['spec'].template.spec as Obj;
    expect((pod['containers'] as Obj[]).map((c) => c['name'])).to.deep.equal(['controller', 'provider-vault']);
    expect((pod['volumes'] as Obj[]).map((v) => v['name'])).to.deep.equal(['providers']);
    expect(podContainer(deployment, 'controller')['image']).to.equal(
      `registry.example.com/ssc/provider@sha256:${'ab'.repeat(32)}`,
    );
    expect(objects.filter((o) => POLICY_KINDS.includes(o.kind ?? ''))).to.deep.equal([]);
    expect(findManifest(objects, 'ConfigMap', 'secrets-store-sync-controller-config')['data']).to.deep.equal({
      tokenRequestAudience: 'vault,api://app',
      allowedSecretTypes: 'Opaque',
    });
  });

  describe('against a real kube-apiserver', () => {
    let cluster: KubeCluster;
    let ns: string;

    before(async () => {
      cluster = await sharedKubeCluster();
      ns = await createNamespace(cluster, 'helm-ssc');
    });
    after(async () => {
      if (ns) await cluster.admin.core.deleteNamespace({ name: ns }).catch(() => undefined);
    });

    it('the API server accepts every rendered object (server-side apply, dryRun=All, fieldValidation=Strict)', async () => {
      const objects = await helm.template(
        mergeValues(RECOMMENDED_VALUES, {
          syncController: { enabled: true, tokenRequestAudience: [{ audience: 'vault' }] },
        }),
        { namespace: ns },
      );
      expect(syncObjects(objects)).to.have.length(20);
      for (const obj of objects) await serverDryRunApply(cluster, obj);
    });
  });
});
