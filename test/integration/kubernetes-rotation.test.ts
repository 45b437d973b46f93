import { expect } from 'chai';
import { readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged as count, startProcess, untilLogged as logged, type Child } from '../../bin/child-process.js';
import { requirePeer } from '../support/peers.js';
import { applyOptInRbac, createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import {
  createDeploymentAndReplicaSet,
  createSecretProviderClass,
  createTestCsiDriver,
  readPodStatus,
  SECRETS_STORE_GROUP,
} from '../support/kube-objects.js';

describe('rotation in Kubernetes mode (real kube-apiserver, file provider)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let scripted: ScriptedProvider;
  let ns: string;
  let uid: string;
  const driverArgs = ['--enable-secret-sync', '--enable-secret-rotation', '--rotation-poll-interval=1s'];

  async function events(reason: string): Promise<string[]> {
    return (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.reason === reason)
      .map((e) => `${e.type}: ${e.message}`);
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'rotation');
    await createTestCsiDriver(cluster);
    await createSecretProviderClass(cluster, ns, 'rot', {
      provider: 'file',
      parameters: { objects: '- objectName: token\n' },
      secretObjects: [{ secretName: 'rot-secret', type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] }],
    });
    await createSecretProviderClass(cluster, ns, 'tok', { provider: 'scripted' });
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'app' },
        spec: {
          // Scheduled on the driver's node, as kubelet's pods are: the driver's pod watch sees it.
          nodeName: 'test-node',
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'secrets',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'rot' },
              },
            },
            {
              name: 'tokens',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'tok', extra: 'from-pod' },
              },
            },
          ],
        },
      },
    });
    uid = pod.metadata?.uid ?? '';
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs,
      providerFiles: { token: 'v1' },
    });
    scripted = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'x', contents: 'x' }]),
    );
  });
  after(async () => {
    await scripted?.stop();
    await stack?.stop();
  });

  it('rotates mounted files, the pod status object and the synced Secret, and tells the user', async () => {
    const target = stack.targetPath('app');
    await stack.client.publish(stack.request(target, 'rot', 'app', ns, uid));
    await writeFile(join(stack.providerRoot, 'token'), 'v2');
    await logged(stack.driver, /"message":"volume rotated"/, 1);
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('v2');
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'rot-secret', namespace: ns });
    expect(Buffer.from(secret.data?.['token'] ?? '', 'base64').toString()).to.equal('v2');
    const status = await readPodStatus(cluster, ns, 'app', 'rot');
    expect(status.status.objects[0]?.version).to.equal(await readFile(join(target, '.metadata/token'), 'utf8'));
    expect(await events('MountRotationComplete')).to.have.length(1);
    expect((await events('SecretRotationComplete'))[0]).to.match(
      /^Normal: Secret .*\/rot-secret updated with rotated content/,
    );
  });

  /** The driver's Kubernetes API requests so far (rest_client_requests_total), per method and code. */
  async function apiRequests(): Promise<Map<string, number>> {
    return new Map(
      [...(await stack.metrics()).matchAll(/^rest_client_requests_total\{method="(\w+)",code="(\d+)"\} (\d+)$/gm)].map(
        (m) => [`${m[1]} ${m[2]}`, Number(m[3])],
      ),
    );
  }

  it('makes no API request at all, no file writes and no events in unchanged rounds', async () => {
    const target = stack.targetPath('app');
    const before = await apiRequests();
    const data = await readlink(join(target, '..data'));
    const statusVersion = (await readPodStatus(cluster, ns, 'app', 'rot')).metadata.resourceVersion;
    const secretVersion = (await cluster.admin.core.readNamespacedSecret({ name: 'rot-secret', namespace: ns }))
      .metadata?.resourceVersion;
    await logged(
      stack.driver,
      /"message":"rotation round done"/,
      count(stack.driver, /"message":"rotation round done"/) + 2,
    );
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect((await readPodStatus(cluster, ns, 'app', 'rot')).metadata.resourceVersion).to.equal(statusVersion);
    expect(
      (await cluster.admin.core.readNamespacedSecret({ name: 'rot-secret', namespace: ns })).metadata?.resourceVersion,
    ).to.equal(secretVersion);
    expect(await events('MountRotationComplete')).to.have.length(1);
    // Volumes come from the pod status watch, pods and nodePublishSecretRef Secrets from theirs, tokens
    // from the cache; the Secret re-sync (a deleted Secret comes back within a rotation interval)
    // reads the synced Secret from the watch of its namespace's used=true Secrets.
    const after = await apiRequests();
    const changed = [...after].filter(([series, n]) => n !== (before.get(series) ?? 0)).map(([series]) => series);
    expect(changed).to.deep.equal([]);
  });

  it("sends the provider fresh service-account tokens for the CSIDriver audiences and the pod's volume attributes", async () => {
    const target = stack.targetPath('tokens');
    await stack.client.publish(stack.request(target, 'tok', 'app', ns, uid));
    // The kubelet-like publish above carries no tokens; wait for the first rotation refresh.
    const forTarget = () => scripted.requests.filter((r) => r.target_path === target);
    while (forTarget().length < 2)
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        count(stack.driver, /"message":"rotation round done"/) + 1,
      );
    const attributes = JSON.parse(forTarget().at(-1)?.attributes ?? '{}') as Record<string, string>;
    expect(attributes['extra']).to.equal('from-pod');
    const tokens = JSON.parse(attributes['csi.storage.k8s.io/serviceAccount.tokens'] ?? '{}') as Record<
      string,
      { token: string; expirationTimestamp: string }
    >;
    expect(Object.keys(tokens)).to.deep.equal(['vault-test']);
    expect(tokens['vault-test']?.token).to.match(/^eyJ/);
    expect(stack.driver.stderr()).not.to.include(tokens['vault-test']?.token ?? 'x');
  });

  it('sends the tokens it minted, never a class parameter or volume attribute of that name', async () => {
    // (A Secret key cannot contain '/', so nodePublishSecretRef data never carries one.)
    const KEY = 'csi.storage.k8s.io/serviceAccount.tokens';
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'tok-creds', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: { password: 'p' },
      },
    });
    await createSecretProviderClass(cluster, ns, 'tok-spoof', {
      provider: 'scripted',
      parameters: { [KEY]: 'from-class' },
    });
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'spoofpod' },
        spec: {
          nodeName: 'test-node',
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'v',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'tok-spoof', [KEY]: 'from-pod' },
                nodePublishSecretRef: { name: 'tok-creds' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('spoof');
    await stack.client.publish(stack.request(target, 'tok-spoof', 'spoofpod', ns, pod.metadata?.uid));
    const forTarget = () => scripted.requests.filter((r) => r.target_path === target);
    while (forTarget().length < 2)
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        count(stack.driver, /"message":"rotation round done"/) + 1,
      );
    const attributes = JSON.parse(forTarget().at(-1)?.attributes ?? '{}') as Record<string, string>;
    const tokens = JSON.parse(attributes[KEY] ?? '{}') as Record<string, { token: string }>;
    expect(Object.keys(tokens)).to.deep.equal(['vault-test']);
    expect(tokens['vault-test']?.token).to.match(/^eyJ/);
    expect(JSON.parse(forTarget().at(-1)?.secrets ?? '{}')).to.deep.equal({ password: 'p' });
    await stack.client.unpublish('vol-spoofpod', target);
  });

  it('sends the nodePublishSecretRef data, read through the used=true label watch, and follows its changes', async () => {
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: 'creds', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: { password: 'p1' },
      },
    });
    await createSecretProviderClass(cluster, ns, 'ref', { provider: 'scripted' });
    const refPod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'refpod' },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'v',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'ref' },
                nodePublishSecretRef: { name: 'creds' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('ref');
    await stack.client.publish(stack.request(target, 'ref', 'refpod', ns, refPod.metadata?.uid));
    const lastFor = () => [...scripted.requests].reverse().find((r) => r.target_path === target);
    // The kubelet-like publish above sent no secrets; the first rotation refresh sends the Secret's data.
    const rotationRequests = () => scripted.requests.filter((r) => r.target_path === target).length;
    while (rotationRequests() < 2)
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        count(stack.driver, /"message":"rotation round done"/) + 1,
      );
    expect(JSON.parse(lastFor()?.secrets ?? '{}')).to.deep.equal({ password: 'p1' });
    const creds = await cluster.admin.core.readNamespacedSecret({ name: 'creds', namespace: ns });
    await cluster.admin.core.replaceNamespacedSecret({
      name: 'creds',
      namespace: ns,
      body: { ...creds, data: { password: Buffer.from('p2').toString('base64') } },
    });
    while (JSON.parse(lastFor()?.secrets ?? '{}').password !== 'p2')
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        count(stack.driver, /"message":"rotation round done"/) + 1,
      );
    expect(stack.driver.stderr()).not.to.include('"p2"');
    expect(stack.driver.stderr(), 'read from the label watch, not by GET').not.to.include(
      'is not labelled secrets-store.csi.k8s.io/used=true',
    );
    await stack.client.unpublish('vol-refpod', target);
  });

  it('never reads a nodePublishSecretRef from another namespace, even one labelled used=true', async () => {
    const other = await createNamespace(cluster, 'rot-other');
    await cluster.admin.core.createNamespacedSecret({
      namespace: other,
      body: {
        metadata: { name: 'creds-elsewhere', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
        stringData: { password: 'other-namespace' },
      },
    });
    await createSecretProviderClass(cluster, ns, 'ref-elsewhere', { provider: 'scripted' });
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'refpod-elsewhere' },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'v',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'ref-elsewhere' },
                nodePublishSecretRef: { name: 'creds-elsewhere' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('ref-elsewhere');
    await stack.client.publish(stack.request(target, 'ref-elsewhere', 'refpod-elsewhere', ns, pod.metadata?.uid));
    // Its refresh needs the Secret and looks for it in the pod's namespace only: a 404 there.
    const missing = new RegExp(
      `nodePublishSecretRef Secret ${ns}/creds-elsewhere: HTTP 404.*"message":"rotation refresh failed"`,
    );
    await logged(stack.driver, missing, 1);
    const sent = scripted.requests.filter((r) => r.target_path === target).map((r) => r.secrets ?? '');
    expect(
      sent.some((s) => s.includes('other-namespace')),
      'a Secret of another namespace was sent',
    ).to.equal(false);
    await stack.client.unpublish('vol-refpod-elsewhere', target);
  });

  it('resumes after a driver restart from the pod status objects, without remounting', async () => {
    const target = stack.targetPath('app');
    const data = await readlink(join(target, '..data'));
    await stack.driver.stop();
    const restarted = await startDriverStack({ kubeconfig: cluster.driverKubeconfig, driverArgs, reuse: stack });
    try {
      await logged(restarted.driver, /"message":"rotation round done"/, 1);
      expect(await readlink(join(target, '..data')), 'no rewrite after restart').to.equal(data);
      await writeFile(join(stack.providerRoot, 'token'), 'v3');
      await logged(restarted.driver, /"message":"volume rotated"/, 1);
      expect(await readFile(join(target, 'token'), 'utf8')).to.equal('v3');
      expect(await events('MountRotationComplete')).to.have.length(2);
    } finally {
      stack = restarted;
    }
  });
});

describe('rotation opt-ins on the SecretProviderClass (real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let ns: string;
  let uid: string;

  async function createClass(name: string, annotations: Record<string, string>, objects: string): Promise<void> {
    await createSecretProviderClass(cluster, ns, name, { provider: 'file', parameters: { objects } }, annotations);
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'optin');
    await createClass('fast', { 'secrets-store.csi.k8s.io/rotation-poll-interval': '1s' }, '- objectName: a\n');
    await createClass('ondemand', {}, '- objectName: b\n');
    uid =
      (
        await cluster.admin.core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: { name: 'p' },
            spec: {
              containers: [{ name: 'c', image: 'busybox' }],
              volumes: [
                {
                  name: 'fast',
                  csi: {
                    driver: 'secrets-store.csi.k8s.io',
                    readOnly: true,
                    volumeAttributes: { secretProviderClass: 'fast' },
                  },
                },
                {
                  name: 'ondemand',
                  csi: {
                    driver: 'secrets-store.csi.k8s.io',
                    readOnly: true,
                    volumeAttributes: { secretProviderClass: 'ondemand' },
                  },
                },
              ],
            },
          },
        })
      ).metadata?.uid ?? '';
    // The driver's own interval is an hour: only the class annotations can make anything happen.
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1h'],
      providerFiles: { a: 'a1', b: 'b1' },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('uses a per-class interval from the rotation-poll-interval annotation', async () => {
    const target = stack.targetPath('fast');
    await stack.client.publish(stack.request(target, 'fast', 'p', ns, uid));
    await writeFile(join(stack.providerRoot, 'a'), 'a2');
    await logged(stack.driver, /"message":"volume rotated"/, 1);
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('a2');
  });

  it('refreshes at once when refresh-requested-at is set on the class', async () => {
    const target = stack.targetPath('ondemand');
    await stack.client.publish(stack.request(target, 'ondemand', 'p', ns, uid));
    await writeFile(join(stack.providerRoot, 'b'), 'b2');
    const rotated = count(stack.driver, /"message":"volume rotated"/);
    const spc = (await cluster.admin.custom.getNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'ondemand',
    })) as { metadata: Record<string, unknown> };
    await cluster.admin.custom.replaceNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'ondemand',
      body: {
        ...spc,
        metadata: {
          ...spc.metadata,
          annotations: { 'secrets-store.csi.k8s.io/refresh-requested-at': new Date().toISOString() },
        },
      },
    });
    await logged(stack.driver, /"message":"volume rotated"/, rotated + 1);
    expect(await readFile(join(target, 'b'), 'utf8')).to.equal('b2');
  });

  it('refreshes at once when refresh-requested-at is set on a pod of this node', async () => {
    await createClass('podreq', {}, '- objectName: c\n');
    await writeFile(join(stack.providerRoot, 'c'), 'c1');
    const created = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'q' },
        spec: {
          nodeName: 'test-node',
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'v',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'podreq' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('podreq');
    await stack.client.publish(stack.request(target, 'podreq', 'q', ns, created.metadata?.uid));
    await writeFile(join(stack.providerRoot, 'c'), 'c2');
    const rotated = count(stack.driver, /"message":"volume rotated"/);
    const pod = await cluster.admin.core.readNamespacedPod({ name: 'q', namespace: ns });
    await cluster.admin.core.replaceNamespacedPod({
      name: 'q',
      namespace: ns,
      body: {
        ...pod,
        metadata: {
          ...pod.metadata,
          annotations: { 'secrets-store.csi.k8s.io/refresh-requested-at': new Date().toISOString() },
        },
      },
    });
    await logged(stack.driver, /"message":"volume rotated"/, rotated + 1);
    expect(await readFile(join(target, 'c'), 'utf8')).to.equal('c2');
  });
});

describe('restart of the owning workload on rotation (opt-in, real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let ns: string;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'restart');
    // Restarts are an opt-in grant, left out of deploy/kustomization.yaml: applied here as a user would.
    await applyOptInRbac(cluster, 'rbac-workload-restart.yaml');
    await createSecretProviderClass(
      cluster,
      ns,
      'cfg',
      { provider: 'file', parameters: { objects: '- objectName: conf\n' } },
      { 'secrets-store.csi.k8s.io/restart-on-rotation': 'true' },
    );
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
      providerFiles: { conf: 'c1' },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it("patches the Deployment's pod template like kubectl rollout restart, once, with an event", async () => {
    const { rsUid } = await createDeploymentAndReplicaSet(cluster, ns, 'web');
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: 'web-1-a',
          labels: { app: 'web' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: rsUid, controller: true }],
        },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 's',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'cfg' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('web');
    await stack.client.publish(stack.request(target, 'cfg', 'web-1-a', ns, pod.metadata?.uid));
    await writeFile(join(stack.providerRoot, 'conf'), 'c2');
    await logged(stack.driver, /"message":"restarted workload after rotation"/, 1);
    const after = (await cluster.admin.objects.read({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
    })) as { spec: { template: { metadata: { annotations?: Record<string, string> } } } };
    expect(
      Date.parse(after.spec.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'] ?? ''),
    ).to.be.greaterThan(0);
    const events = (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.reason === 'WorkloadRestarted',
    );
    expect(events.map((e) => e.message)).to.deep.equal([
      `restarted Deployment ${ns}/web because rotation changed the content of SecretProviderClass cfg`,
    ]);
  });
});

describe('rotation bad input (real kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let scripted: ScriptedProvider;
  let ns: string;

  async function createClass(name: string, provider: string): Promise<void> {
    await createSecretProviderClass(cluster, ns, name, { provider, parameters: { objects: '- objectName: a\n' } });
  }
  async function createPod(name: string, spc: string, serviceAccountName = 'default'): Promise<string> {
    return (
      (
        await cluster.admin.core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: { name },
            spec: {
              serviceAccountName,
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
        })
      ).metadata?.uid ?? ''
    );
  }
  async function reasons(pod: string): Promise<string[]> {
    return (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items
      .filter((e) => e.involvedObject.name === pod)
      .map((e) => `${e.reason}: ${e.message}`);
  }
  const rounds = () => count(stack.driver, /"message":"rotation round done"/);

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'rotbad');
    // Before the driver starts: it reads the CSIDriver (its tokenRequests) once and caches it.
    await createTestCsiDriver(cluster);
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-sync', '--enable-secret-rotation', '--rotation-poll-interval=1s'],
      providerFiles: { a: 'a1' },
    });
    scripted = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([
        { path: 'x', contents: '1' },
        { path: 'y', contents: '1' },
      ]),
    );
  });
  after(async () => {
    await scripted?.stop();
    await stack?.stop();
  });

  it('follows a provider that returns a different set of objects: files and .metadata added and removed', async () => {
    await createClass('set', 'scripted');
    const uid = await createPod('set-pod', 'set');
    const target = stack.targetPath('set');
    await stack.client.publish(stack.request(target, 'set', 'set-pod', ns, uid));
    scripted.script = async () =>
      responseWith([
        { path: 'x', contents: '1' },
        { path: 'z', contents: '2' },
      ]);
    await logged(stack.driver, /"message":"volume rotated"/, count(stack.driver, /"message":"volume rotated"/) + 1);
    expect(await readFile(join(target, 'z'), 'utf8')).to.equal('2');
    expect(
      await readFile(join(target, 'y')).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
    expect(
      await readFile(join(target, '.metadata/y')).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
    await stack.client.unpublish('vol-set-pod', target);
  });

  it('keeps the content and warns when the class is deleted after the mount', async () => {
    await createClass('gone', 'file');
    const uid = await createPod('gone-pod', 'gone');
    const target = stack.targetPath('gone');
    await stack.client.publish(stack.request(target, 'gone', 'gone-pod', ns, uid));
    await cluster.admin.custom.deleteNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'gone',
    });
    await writeFile(join(stack.providerRoot, 'a'), 'a2');
    while (!(await reasons('gone-pod')).some((r) => r.startsWith('MountRotationFailed')))
      await logged(stack.driver, /"message":"rotation round done"/, rounds() + 1);
    expect((await reasons('gone-pod')).find((r) => r.startsWith('MountRotationFailed'))).to.include(
      `SecretProviderClass ${ns}/gone not found`,
    );
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('a1');
    await stack.client.unpublish('vol-gone-pod', target);
  });

  it('warns when a token cannot be minted (the service account is gone), keeping the content', async () => {
    await cluster.admin.core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: 'short-lived' } },
    });
    await createClass('tok', 'file');
    const uid = await createPod('tok-pod', 'tok', 'short-lived');
    const target = stack.targetPath('tok');
    await stack.client.publish(stack.request(target, 'tok', 'tok-pod', ns, uid));
    await cluster.admin.core.deleteNamespacedServiceAccount({ name: 'short-lived', namespace: ns });
    while (!(await reasons('tok-pod')).some((r) => r.startsWith('MountRotationFailed')))
      await logged(stack.driver, /"message":"rotation round done"/, rounds() + 1);
    expect((await reasons('tok-pod')).find((r) => r.startsWith('MountRotationFailed'))).to.match(
      /request a token for ServiceAccount .*short-lived \(audience vault-test\)/,
    );
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('a2');
    await stack.client.unpublish('vol-tok-pod', target);
  });

  it('with on-object-removed: remove, drops the Secret key of an object removed from the store', async () => {
    await writeFile(join(stack.providerRoot, 'gone-soon'), 'g');
    await createSecretProviderClass(
      cluster,
      ns,
      'rm',
      {
        provider: 'file',
        parameters: { missingObjects: 'omit', objects: '- objectName: a\n- objectName: gone-soon\n' },
        secretObjects: [
          {
            secretName: 'rm-secret',
            type: 'Opaque',
            data: [
              { objectName: 'a', key: 'a' },
              { objectName: 'gone-soon', key: 'g' },
            ],
          },
        ],
      },
      { 'secrets-store.csi.k8s.io/on-object-removed': 'remove' },
    );
    const uid = await createPod('rm-pod', 'rm');
    const target = stack.targetPath('rm');
    await stack.client.publish(stack.request(target, 'rm', 'rm-pod', ns, uid));
    expect(
      Object.keys(
        (await cluster.admin.core.readNamespacedSecret({ name: 'rm-secret', namespace: ns })).data ?? {},
      ).sort(),
    ).to.deep.equal(['a', 'g']);
    await rm(join(stack.providerRoot, 'gone-soon'));
    while (
      Object.keys(
        (await cluster.admin.core.readNamespacedSecret({ name: 'rm-secret', namespace: ns })).data ?? {},
      ).includes('g')
    ) {
      await logged(stack.driver, /"message":"rotation round done"/, rounds() + 1);
    }
    expect(
      Object.keys((await cluster.admin.core.readNamespacedSecret({ name: 'rm-secret', namespace: ns })).data ?? {}),
    ).to.deep.equal(['a']);
    expect(
      await readFile(join(target, 'gone-soon')).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
    await stack.client.unpublish('vol-rm-pod', target);
  });

  it('skips a volume whose pod was deleted: no events, content left for kubelet to unmount', async () => {
    await createClass('del', 'file');
    const uid = await createPod('del-pod', 'del');
    const target = stack.targetPath('del');
    await stack.client.publish(stack.request(target, 'del', 'del-pod', ns, uid));
    await cluster.admin.core.deleteNamespacedPod({ name: 'del-pod', namespace: ns, gracePeriodSeconds: 0 });
    await writeFile(join(stack.providerRoot, 'a'), 'a3');
    await logged(stack.driver, /"message":"rotation round done"/, rounds() + 2);
    expect(await reasons('del-pod')).to.deep.equal([]);
    expect(await readFile(join(target, 'a'), 'utf8')).to.equal('a2');
    await stack.client.unpublish('vol-del-pod', target);
  });
});

describe("interop in Kubernetes mode: rotation with upstream's provider server (real Go process, real kube-apiserver)", function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let upstream: Child;
  let ns: string;

  before(async () => {
    const binary = requirePeer('UPSTREAM_FAKE_PROVIDER');
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'interop');
    await createSecretProviderClass(cluster, ns, 'up', {
      provider: 'upstream-fake',
      parameters: { objects: '' },
      secretObjects: [{ secretName: 'up-secret', type: 'Opaque', data: [{ objectName: 'foo', key: 'foo' }] }],
    });
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-sync', '--enable-secret-rotation', '--rotation-poll-interval=1s'],
    });
    await writeFile(
      join(stack.work, 'fake.json'),
      JSON.stringify({
        objects: { 'secret/foo': 'v1' },
        files: [{ path: 'foo', mode: 420, contents: Buffer.from('secret').toString('base64') }],
      }),
    );
    upstream = await startProcess(
      binary,
      [
        '--endpoint',
        `unix://${join(stack.providersDir, 'upstream-fake.sock')}`,
        '--config',
        join(stack.work, 'fake.json'),
      ],
      /listening on/,
    );
  });
  after(async () => {
    await upstream?.stop();
    await stack?.stop();
  });

  it('turns v1/secret into v2/rotated in the files, .metadata, the pod status object and the synced Secret', async () => {
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'app' },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            {
              name: 'v',
              csi: {
                driver: 'secrets-store.csi.k8s.io',
                readOnly: true,
                volumeAttributes: { secretProviderClass: 'up' },
              },
            },
          ],
        },
      },
    });
    const target = stack.targetPath('up');
    await stack.client.publish(stack.request(target, 'up', 'app', ns, pod.metadata?.uid));
    const secretValue = async () =>
      Buffer.from(
        (await cluster.admin.core.readNamespacedSecret({ name: 'up-secret', namespace: ns })).data?.['foo'] ?? '',
        'base64',
      ).toString();
    expect(await secretValue()).to.equal('secret');
    await writeFile(
      join(stack.work, 'fake.json'),
      JSON.stringify({
        objects: { 'secret/foo': 'v2' },
        files: [{ path: 'foo', mode: 420, contents: Buffer.from('rotated').toString('base64') }],
      }),
    );
    upstream.process.kill('SIGHUP');
    await logged(stack.driver, /"message":"volume rotated"/, 1);
    expect(await readFile(join(target, 'foo'), 'utf8')).to.equal('rotated');
    expect(await readFile(join(target, '.metadata/secret%2Ffoo'), 'utf8')).to.equal('v2');
    const status = await readPodStatus(cluster, ns, 'app', 'up');
    expect(status.status.objects).to.deep.equal([{ id: 'secret/foo', version: 'v2' }]);
    expect(await secretValue()).to.equal('rotated');
    await stack.client.unpublish('vol-app', target);
  });
});
