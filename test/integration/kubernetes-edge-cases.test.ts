import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inlinePublishRequest, inlineVolumeContext } from '../../bin/csi-client.js';
import { failure } from '../support/call-outcome.js';
import {
  createNamespace,
  kustomizationRbacFiles,
  readManifests,
  sharedKubeCluster,
  type KubeCluster,
} from '../support/kube-cluster.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { csiDriverTextForVault } from '../support/deploy-manifests.js';
import { parseManifests } from '../support/helm.js';
import {
  createBarePod,
  createSecretProviderClass,
  readPodStatus,
  SECRETS_STORE_GROUP,
} from '../support/kube-objects.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

describe('Kubernetes mode edge cases (real kube-apiserver)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ScriptedProvider;
  let ns: string;

  async function createClass(name: string, spec: Record<string, unknown>): Promise<void> {
    await createSecretProviderClass(cluster, ns, name, spec);
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'edge');
    stack = await startDriverStack({ kubeconfig: cluster.driverKubeconfig, driverArgs: ['--enable-secret-sync'] });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([
        { path: 'user', contents: 'alice' },
        { path: 'cert.pem', contents: '-----BEGIN CERTIFICATE-----\nMIIx\n-----END CERTIFICATE-----\n' },
      ]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  it('accepts every deploy/ manifest in a server-side dry run', async () => {
    const files = [
      'csidriver.yaml',
      'driver-daemonset.yaml',
      'provider-file-daemonset.yaml',
      'provider-vault-daemonset.yaml',
      'provider-exec-daemonset.yaml',
      'provider-pki-daemonset.yaml',
      ...(await kustomizationRbacFiles()),
      'rbac-workload-restart.yaml',
      ...(await readdir(join(REPO, 'deploy/crds'))).map((f) => `crds/${f}`),
    ];
    for (const file of files) {
      for (const obj of await readManifests(join(REPO, 'deploy', file))) {
        // CRDs and RBAC already exist in the test cluster: a dry-run replace validates those.
        const existing = await cluster.admin.objects.read(obj as never).then(
          (o) => o,
          () => undefined,
        );
        if (existing)
          await cluster.admin.objects.replace(
            { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata?.resourceVersion } } as never,
            undefined,
            'All',
          );
        else await cluster.admin.objects.create(obj, undefined, 'All');
      }
    }
    // The CSIDriver as a vault user uncomments it (tokenRequests, serviceAccountTokenInSecrets).
    const [csiDriver] = parseManifests(csiDriverTextForVault());
    const live = await cluster.admin.objects.read(csiDriver as never).then(
      (o) => o,
      () => undefined,
    );
    if (live)
      await cluster.admin.objects.replace(
        {
          ...csiDriver,
          metadata: { ...csiDriver?.metadata, resourceVersion: live.metadata?.resourceVersion },
        } as never,
        undefined,
        'All',
      );
    else await cluster.admin.objects.create(csiDriver as never, undefined, 'All');
    const examples = [
      'secretproviderclass-file.yaml',
      'pod.yaml',
      'vault/secretproviderclass-vault.yaml',
      'vault/secretproviderclass-openbao.yaml',
      'vault/pod.yaml',
      'exec/helpers-configmap.yaml',
      'exec/secretproviderclass.yaml',
      'exec/pod.yaml',
      'pki/secretproviderclass.yaml',
      'pki/pod.yaml',
    ];
    const objects = (await Promise.all(examples.map((f) => readManifests(join(REPO, 'deploy/examples', f))))).flat();
    // Pod admission looks the pod's ServiceAccount up, so those are created for real first.
    for (const obj of objects.filter((o) => o.kind === 'ServiceAccount'))
      await cluster.admin.objects.create({ ...obj, metadata: { ...obj.metadata, namespace: ns } });
    for (const obj of objects.filter((o) => o.kind !== 'ServiceAccount')) {
      await cluster.admin.objects.create({ ...obj, metadata: { ...obj.metadata, namespace: ns } }, undefined, 'All');
    }
  });

  it('passes the nodePublishSecretRef data and service-account tokens to the provider, and never logs them', async () => {
    await createClass('pass', { provider: 'scripted', parameters: { roleName: 'r' } });
    const uid = await createBarePod(cluster, ns, 'pass-pod');
    const tokens = JSON.stringify({
      vault: { token: 'eyJ-very-secret-token', expirationTimestamp: '2030-01-01T00:00:00Z' },
    });
    const ctx = {
      ...inlineVolumeContext({ name: 'pass-pod', namespace: ns, uid, serviceAccountName: 'default' }, 'pass'),
    };
    const target = stack.targetPath('pass');
    await stack.client.publish(
      inlinePublishRequest('vol-pass', target, ctx, {
        username: 'svc',
        password: 'sup3r-s3cret',
        'csi.storage.k8s.io/serviceAccount.tokens': tokens,
      }),
    );
    const request = provider.requests.at(-1);
    expect(JSON.parse(request?.secrets ?? '')).to.deep.equal({ username: 'svc', password: 'sup3r-s3cret' });
    const attributes = JSON.parse(request?.attributes ?? '') as Record<string, string>;
    expect(attributes).to.include({
      roleName: 'r',
      'csi.storage.k8s.io/serviceAccount.tokens': tokens,
      'csi.storage.k8s.io/pod.namespace': ns,
    });
    expect(stack.driver.stderr()).not.to.include('sup3r-s3cret').and.not.to.include('eyJ-very-secret-token');
    await stack.client.unpublish('vol-pass', target);
  });

  it("owns a bare pod's Secret by its SecretProviderClassPodStatus", async () => {
    await createClass('bare', {
      provider: 'scripted',
      secretObjects: [{ secretName: 'bare-secret', type: 'Opaque', data: [{ objectName: 'user', key: 'username' }] }],
    });
    const uid = await createBarePod(cluster, ns, 'bare-pod');
    const target = stack.targetPath('bare');
    await stack.client.publish(stack.request(target, 'bare', 'bare-pod', ns, uid));
    const status = await readPodStatus(cluster, ns, 'bare-pod', 'bare');
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'bare-secret', namespace: ns });
    expect(secret.metadata?.ownerReferences?.map((o) => [o.kind, o.uid])).to.deep.equal([
      ['SecretProviderClassPodStatus', status.metadata.uid],
    ]);
    await stack.client.unpublish('vol-bare-pod', target);
  });

  it('takes over a pod status object of the same name written by another node', async () => {
    await createClass('moved', { provider: 'scripted' });
    const uid = await createBarePod(cluster, ns, 'moved-pod');
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasspodstatuses',
      body: {
        apiVersion: 'secrets-store.csi.x-k8s.io/v1',
        kind: 'SecretProviderClassPodStatus',
        metadata: {
          name: `moved-pod-${ns}-moved`,
          labels: { 'internal.secrets-store.csi.k8s.io/node-name': 'old-node' },
        },
        status: {
          podName: 'moved-pod',
          secretProviderClassName: 'moved',
          mounted: true,
          targetPath: '/old',
          objects: [],
        },
      },
    });
    const target = stack.targetPath('moved');
    await stack.client.publish(stack.request(target, 'moved', 'moved-pod', ns, uid));
    const status = await readPodStatus(cluster, ns, 'moved-pod', 'moved');
    expect(status.metadata.labels['internal.secrets-store.csi.k8s.io/node-name']).to.equal('test-node');
    expect(status.metadata.ownerReferences.map((o) => o.uid)).to.deep.equal([uid]);
    expect(status.status.targetPath).to.equal(target);
    expect(status.status.objects).to.have.length(2);
    await stack.client.unpublish('vol-moved-pod', target);
  });

  const badClasses: [string, Record<string, unknown>, string, RegExp][] = [
    ['a class without provider', { parameters: { a: 'b' } }, 'INVALID_ARGUMENT', /spec.provider is required/],
    [
      'a secretObjects entry without secretName',
      { provider: 'scripted', secretObjects: [{ data: [{ objectName: 'user', key: 'k' }] }] },
      'INVALID_ARGUMENT',
      /spec.secretObjects\[0\].secretName is required/,
    ],
    [
      'a secretObjects entry without key',
      { provider: 'scripted', secretObjects: [{ secretName: 's', data: [{ objectName: 'user' }] }] },
      'INVALID_ARGUMENT',
      /spec.secretObjects\[0\].data\[0\].key is required/,
    ],
    [
      'an objectName outside the volume',
      {
        provider: 'scripted',
        secretObjects: [{ secretName: 's4', data: [{ objectName: '../../../../etc/hostname', key: 'k' }] }],
      },
      'INVALID_ARGUMENT',
      /is not a path inside the volume/,
    ],
  ];
  // Secrets that cannot be built never fail the mount: kubernetes-secret-sync.test.ts.
  for (const [name, spec, code, message] of badClasses) {
    it(`refuses ${name} with a clear error and leaves nothing mounted`, async () => {
      const className = `bad-${badClasses.findIndex((c) => c[0] === name)}`;
      await createClass(className, spec);
      const uid = await createBarePod(cluster, ns, `${className}-pod`);
      const target = stack.targetPath(className);
      const err = await failure(stack.client.publish(stack.request(target, className, `${className}-pod`, ns, uid)));
      expect(err.code).to.equal(code);
      expect(err.message).to.match(message);
      expect(
        await readFile(join(target, 'user')).then(
          () => 'left',
          () => 'gone',
        ),
      ).to.equal('gone');
      const status = await readPodStatus(cluster, ns, `${className}-pod`, className).then(
        () => 'left',
        () => 'gone',
      );
      expect(status, 'a failed first publish leaves no pod status object').to.equal('gone');
    });
  }

  it('reports failures: Warning MountFailed on the Pod, and lastError on the pod status object while the old content stays (a failed republish is answered OK)', async () => {
    const list = await cluster.admin.core.listNamespacedEvent({ namespace: ns });
    const mountFailed = list.items.filter((e) => e.reason === 'MountFailed');
    expect(
      mountFailed.some(
        (e) =>
          e.type === 'Warning' &&
          e.involvedObject.name === 'bad-0-pod' &&
          /spec.provider is required/.test(e.message ?? ''),
      ),
    ).to.equal(true);

    await createClass('flaky', { provider: 'scripted' });
    const uid = await createBarePod(cluster, ns, 'flaky-pod');
    const target = stack.targetPath('flaky');
    await stack.client.publish(stack.request(target, 'flaky', 'flaky-pod', ns, uid));
    const good = provider.script;
    provider.script = async () => responseWith([{ path: '../escape' }]);
    // Answered OK (kubernetes#121271: kubelets without the fix delete the mount dir on a final error); the event and lastError say why.
    await stack.client.publish(stack.request(target, 'flaky', 'flaky-pod', ns, uid));
    expect(stack.driver.stderr()).to.include(
      'kubelet republish failed; the old content stays mounted and kubelet is answered OK',
    );
    const read = async () => (await readPodStatus(cluster, ns, 'flaky-pod', 'flaky')).status.lastError;
    expect(await read()).to.match(/invalid file path "\.\.\/escape"/);
    expect(await readFile(join(target, 'user'), 'utf8')).to.equal('alice');
    provider.script = good;
    await stack.client.publish(stack.request(target, 'flaky', 'flaky-pod', ns, uid));
    expect(await read()).to.equal('');
    await stack.client.unpublish('vol-flaky-pod', target);
  });
});
