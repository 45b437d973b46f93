import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import { httpStatusOf } from '../../driver/k8s/api-errors.js';
import { connectKubeApi } from '../../driver/k8s/client/connect.js';
import { formatRestartedAt, restartPatch } from '../../driver/rotation/restart-decision.js';
import { applyOptInRbac, createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { createDeploymentAndReplicaSet, createSecretProviderClass } from '../support/kube-objects.js';

const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
const SPACING_MS = 8000;

interface DeploymentObject {
  metadata: { uid: string };
  spec: { template: { metadata: { annotations?: Record<string, string> } } };
}

/**
 * Restart loops: a provider whose content changes on every read (vault-csi-provider
 * rendering a whole secret with Vault's request_id) must not restart a workload every
 * rotation round. The spacing is read from the workload's restartedAt annotation.
 */
describe('restart on rotation: minimum spacing between restarts (real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let churning: ScriptedProvider;
  let churn = false;
  let ns: string;

  async function createClass(name: string, provider: string, objects = ''): Promise<void> {
    await createSecretProviderClass(
      cluster,
      ns,
      name,
      { provider, parameters: { objects } },
      { 'secrets-store.csi.k8s.io/restart-on-rotation': 'true' },
    );
  }
  /** A pod of that ReplicaSet mounting `spc`, published like kubelet: its target path and creation time. */
  async function startPod(
    pod: string,
    owner: { rs: string; rsUid: string },
    spc: string,
  ): Promise<{ target: string; created: number }> {
    const created = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: pod,
          labels: { app: owner.rs },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.rs, uid: owner.rsUid, controller: true },
          ],
        },
        spec: {
          nodeName: 'test-node',
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 's',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: spc },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath(pod);
    await stack.client.publish(stack.request(target, spc, pod, ns, created.metadata?.uid));
    return { target, created: new Date(created.metadata?.creationTimestamp ?? 0).getTime() };
  }
  async function restartedAt(name: string): Promise<string | undefined> {
    const d = (await cluster.admin.objects.read({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns },
    })) as DeploymentObject;
    return d.spec.template.metadata.annotations?.[RESTARTED_AT];
  }
  async function events(pod: string, reason: string): Promise<string[]> {
    return (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.involvedObject.name === pod && e.reason === reason)
      .map((e) => `${e.type}: ${e.message}`);
  }
  const restarted = (name: string) =>
    new RegExp(`"message":"restarted workload after rotation"[^\\n]*"workload":"${ns}/Deployment/${name}"`);
  const deferred = (name: string) =>
    new RegExp(`"message":"workload restart deferred"[^\\n]*"workload":"${ns}/Deployment/${name}"`);
  const rounds = () => count(stack.driver, /"message":"rotation round done"/);

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'spacing');
    // Restarts are an opt-in grant, left out of deploy/kustomization.yaml: applied here as a user would.
    await applyOptInRbac(cluster, 'rbac-workload-restart.yaml');
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      providerFiles: { conf: 'c1' },
      driverArgs: [
        '--enable-secret-rotation',
        '--rotation-poll-interval=1s',
        `--workload-restart-min-interval=${SPACING_MS / 1000}s`,
      ],
    });
    // Like vault-csi-provider with a whole-secret JSON: a new request_id on every read.
    churning = await startScriptedProvider(stack.providersDir, 'churning', async () =>
      responseWith([
        {
          path: 'secret.json',
          contents: JSON.stringify({ request_id: churn ? randomUUID() : 'fixed', data: { password: 'same' } }),
        },
      ]),
    );
    await createClass('cfg', 'file', '- objectName: conf\n');
    await createClass('vault-like', 'churning');
  });
  after(async () => {
    await churning?.stop();
    await stack?.stop();
  });

  it('defers a restart that comes too soon after one recorded on the workload (by another node or driver), then restarts', async () => {
    // A restart this driver never did: the spacing must come from the workload itself.
    const earlier = formatRestartedAt(new Date(Date.now() - 1000));
    const api = await createDeploymentAndReplicaSet(cluster, ns, 'api', { [RESTARTED_AT]: earlier });
    const { target } = await startPod('api-1-a', api, 'cfg');
    await writeFile(join(stack.providerRoot, 'conf'), 'c2');
    await logged(stack.driver, deferred('api'));
    expect(await restartedAt('api')).to.equal(earlier);
    const [warning] = await events('api-1-a', 'WorkloadRestartDeferred');
    const until = formatRestartedAt(new Date(Date.parse(earlier) + SPACING_MS));
    expect(warning).to.equal(
      `Warning: rotation changed the content of SecretProviderClass cfg, but Deployment ${ns}/api was restarted at ${earlier}, ` +
        `less than --workload-restart-min-interval (8s) ago; it restarts at ${until}. Content that changes on every read (docs/rotation.md) keeps restarting it this often`,
    );
    await logged(stack.driver, restarted('api'));
    const now = await restartedAt('api');
    expect(Date.parse(now ?? '') - Date.parse(earlier)).to.be.at.least(SPACING_MS);
    expect(await events('api-1-a', 'WorkloadRestarted')).to.deep.equal([
      `Normal: restarted Deployment ${ns}/api because rotation changed the content of SecretProviderClass cfg`,
    ]);
    await stack.client.unpublish('vol-api-1-a', target);
  });

  it('restarts a workload whose content changes on every read at most once per spacing, with one Warning per held-back restart', async () => {
    const app = await createDeploymentAndReplicaSet(cluster, ns, 'app');
    const first = await startPod('app-1-a', app, 'vault-like');
    // restartedAt and creationTimestamp have whole seconds: churn from the second after the
    // pod's creation (kubelet's first publish comes later than that anyway).
    while (Date.now() < first.created + 1000)
      await logged(stack.driver, /"message":"rotation round done"/, rounds() + 1);
    churn = true;
    await logged(stack.driver, restarted('app'));
    const a = await restartedAt('app');
    // What the rollout would do: a new pod, created after the restart, with content that churns.
    const second = await startPod('app-1-b', app, 'vault-like');
    await logged(stack.driver, deferred('app'));
    const roundsWhileDeferred = rounds();
    await logged(stack.driver, restarted('app'), 2);
    const b = await restartedAt('app');
    expect(Date.parse(b ?? '') - Date.parse(a ?? '')).to.be.at.least(SPACING_MS);
    // Every round in between rewrote the volume, none restarted or warned again.
    expect(rounds() - roundsWhileDeferred).to.be.at.least(2);
    expect(count(stack.driver, deferred('app'))).to.equal(1);
    expect(await events('app-1-b', 'WorkloadRestartDeferred')).to.have.length(1);
    // Both pods predate the second restart: their rounds go on without another one.
    const settled = rounds();
    await logged(stack.driver, /"message":"rotation round done"/, settled + 2);
    expect(count(stack.driver, restarted('app'))).to.equal(2);
    expect(await restartedAt('app')).to.equal(b);
    await stack.client.unpublish('vol-app-1-a', first.target);
    await stack.client.unpublish('vol-app-1-b', second.target);
    churn = false;
  });

  for (const [shape, annotations] of [
    ['with', { [RESTARTED_AT]: '2026-01-01T00:00:00Z' }],
    ['without', undefined],
  ] as const) {
    it(`a restart patch built from a stale read (template ${shape} annotations) is refused by the API server: two nodes at once restart once`, async () => {
      const name = `race-${shape}`;
      await createDeploymentAndReplicaSet(cluster, ns, name, annotations);
      const path = `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
      const api = connectKubeApi(cluster.driverKubeconfig, {});
      try {
        const stale = (await api.get<DeploymentObject>(path)).spec.template.metadata;
        await api.patch(path, restartPatch(stale, new Date('2026-02-01T00:00:00Z')));
        const refused = await api.patch(path, restartPatch(stale, new Date('2026-02-01T00:00:05Z'))).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(httpStatusOf(refused)).to.equal(422);
        expect(await restartedAt(name)).to.equal('2026-02-01T00:00:00Z');
      } finally {
        api.close();
      }
    });
  }
});
