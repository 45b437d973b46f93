import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { failure } from '../support/call-outcome.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { readPodStatus, SECRETS_STORE_GROUP } from '../support/kube-objects.js';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIcertA\n-----END CERTIFICATE-----';
const RSA = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
const KEY = RSA.export({ type: 'pkcs8', format: 'pem' }).toString().trim();
// tls.key as upstream writes it: PKCS#1 (driver/secret-sync/tls-secret-data.ts).
const RSA_KEY = RSA.export({ type: 'pkcs1', format: 'pem' }).toString();

function spc(name: string, secretObjects: unknown[] = []) {
  return {
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    metadata: { name },
    spec: {
      provider: 'file',
      parameters: {
        objects: '- objectName: db-password\n  sourcePath: db/password\n- objectName: tls.pem\n  sourcePath: tls.pem\n',
      },
      secretObjects,
    },
  };
}

const SECRET_OBJECTS = [
  {
    secretName: 'app-secret',
    type: 'Opaque',
    labels: { app: 'web' },
    data: [{ objectName: 'db-password', key: 'password' }],
  },
  {
    secretName: 'app-tls',
    type: 'kubernetes.io/tls',
    data: [
      { objectName: 'tls.pem', key: 'tls.crt' },
      { objectName: 'tls.pem', key: 'tls.key' },
    ],
  },
];

describe('Kubernetes mode against a real kube-apiserver (driver bound by deploy/ RBAC)', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let ns: string;
  let podUid: string;
  let rsUid: string;

  async function events(reason: string): Promise<string[]> {
    const list = await cluster.admin.core.listNamespacedEvent({ namespace: ns });
    return list.items.filter((e) => e.reason === reason).map((e) => `${e.type} ${e.involvedObject.name}: ${e.message}`);
  }

  async function secret(name: string) {
    return cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'publish');
    // A ReplicaSet-owned pod, as a Deployment would make (no controller runs: we create both).
    const rs: { metadata?: { uid?: string } } = await cluster.admin.objects.create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-123', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    } as never);
    rsUid = rs.metadata?.uid ?? '';
    const pod = await cluster.admin.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: {
          name: 'web-123-abc',
          labels: { app: 'web' },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-123', uid: rsUid, controller: true },
          ],
        },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    podUid = pod.metadata?.uid ?? '';
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      body: spc('web', SECRET_OBJECTS),
    });
    stack = await startDriverStack({
      kubeconfig: cluster.driverKubeconfig,
      driverArgs: ['--enable-secret-sync'],
      providerFiles: { 'db/password': 'hunter2', 'tls.pem': `${KEY}\n${CERT}\n` },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('publishes: files on disk, pod status object with node label, owner and sorted objects', async () => {
    const target = stack.targetPath('web');
    await stack.client.publish(stack.request(target, 'web', 'web-123-abc', ns, podUid));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2');
    const status = await readPodStatus(cluster, ns, 'web-123-abc', 'web');
    expect(status.metadata.labels['internal.secrets-store.csi.k8s.io/node-name']).to.equal('test-node');
    expect(status.metadata.ownerReferences.map((o) => [o.kind, o.name, o.uid])).to.deep.equal([
      ['Pod', 'web-123-abc', podUid],
    ]);
    expect(status.status).to.include({
      podName: 'web-123-abc',
      secretProviderClassName: 'web',
      mounted: true,
      targetPath: target,
    });
    expect(status.status.objects.map((o) => o.id)).to.deep.equal(['db-password', 'tls.pem']);
    expect(status.status.objects[0]?.version).to.equal(await readFile(join(target, '.metadata/db-password'), 'utf8'));
  });

  it("syncs secretObjects into Secrets owned by the pod's owner, split for kubernetes.io/tls", async () => {
    const opaque = await secret('app-secret');
    expect(Buffer.from(opaque.data?.['password'] ?? '', 'base64').toString()).to.equal('hunter2');
    expect(opaque.metadata?.labels).to.include({ 'secrets-store.csi.k8s.io/managed': 'true', app: 'web' });
    expect(opaque.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid])).to.deep.equal([
      ['ReplicaSet', 'web-123', rsUid],
    ]);
    const tls = await secret('app-tls');
    expect(tls.type).to.equal('kubernetes.io/tls');
    expect(Buffer.from(tls.data?.['tls.crt'] ?? '', 'base64').toString()).to.equal(`${CERT}\n`);
    expect(Buffer.from(tls.data?.['tls.key'] ?? '', 'base64').toString()).to.equal(RSA_KEY);
  });

  it('updates a Secret only when its data changed, keeping foreign labels, annotations and owners', async () => {
    const before = await secret('app-secret');
    const extraOwner = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'keeper',
      uid: '00000000-0000-0000-0000-000000000001',
    };
    await cluster.admin.core.replaceNamespacedSecret({
      name: 'app-secret',
      namespace: ns,
      body: {
        ...before,
        metadata: {
          ...before.metadata,
          labels: { ...before.metadata?.labels, team: 'blue' },
          annotations: { ...before.metadata?.annotations, note: 'keep' },
          ownerReferences: [...(before.metadata?.ownerReferences ?? []), extraOwner],
        },
      },
    });
    const unchangedVersion = (await secret('app-secret')).metadata?.resourceVersion;
    const target = stack.targetPath('web');
    await stack.client.publish(stack.request(target, 'web', 'web-123-abc', ns, podUid));
    expect((await secret('app-secret')).metadata?.resourceVersion, 'an unchanged republish writes nothing').to.equal(
      unchangedVersion,
    );

    await writeFile(join(stack.providerRoot, 'db/password'), 'correct horse');
    await stack.client.publish(stack.request(target, 'web', 'web-123-abc', ns, podUid));
    const after = await secret('app-secret');
    expect(Buffer.from(after.data?.['password'] ?? '', 'base64').toString()).to.equal('correct horse');
    expect(after.metadata?.labels).to.include({ team: 'blue', 'secrets-store.csi.k8s.io/managed': 'true' });
    expect(after.metadata?.annotations).to.include({ note: 'keep' });
    expect(after.metadata?.ownerReferences?.map((o) => o.name)).to.deep.equal(['web-123', 'keeper']);
  });

  it('restores a managed Secret whose data was edited by hand', async () => {
    const edited = await secret('app-secret');
    await cluster.admin.core.replaceNamespacedSecret({
      name: 'app-secret',
      namespace: ns,
      body: { ...edited, data: { ...edited.data, password: Buffer.from('tampered').toString('base64') } },
    });
    await stack.client.publish(stack.request(stack.targetPath('web'), 'web', 'web-123-abc', ns, podUid));
    expect(Buffer.from((await secret('app-secret')).data?.['password'] ?? '', 'base64').toString()).to.equal(
      'correct horse',
    );
  });

  it('never touches a Secret it does not manage: Warning SecretOwnershipConflict', async () => {
    await cluster.admin.core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'taken' }, stringData: { password: 'theirs' } },
    });
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      body: spc('conflict', [
        { secretName: 'taken', type: 'Opaque', data: [{ objectName: 'db-password', key: 'password' }] },
      ]),
    });
    const target = stack.targetPath('conflict');
    await stack.client.publish(stack.request(target, 'conflict', 'web-123-abc', ns, podUid));
    expect(Buffer.from((await secret('taken')).data?.['password'] ?? '', 'base64').toString()).to.equal('theirs');
    expect(await events('SecretOwnershipConflict')).to.have.length(1);
    expect((await events('SecretOwnershipConflict'))[0]).to.match(
      /^Warning web-123-abc: Secret .*\/taken exists and is not managed/,
    );
    await stack.client.unpublish('vol-web-123-abc', target);
  });

  it('NOT_FOUND names namespace/name; a class created after the pod is found on retry (upstream #1436)', async () => {
    const target = stack.targetPath('late');
    const err = await failure(stack.client.publish(stack.request(target, 'late', 'web-123-abc', ns, podUid)));
    expect(err.code).to.equal('NOT_FOUND');
    expect(err.message).to.include(`SecretProviderClass ${ns}/late not found`);
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      body: spc('late'),
    });
    await stack.client.publish(stack.request(target, 'late', 'web-123-abc', ns, podUid));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse');
    await stack.client.unpublish('vol-web-123-abc', target);
  });

  it("reads classes from the pod's namespace only", async () => {
    const other = await createNamespace(cluster, 'other');
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: other,
      plural: 'secretproviderclasses',
      body: spc('elsewhere'),
    });
    const err = await failure(
      stack.client.publish(stack.request(stack.targetPath('elsewhere'), 'elsewhere', 'web-123-abc', ns, podUid)),
    );
    expect(err.code).to.equal('NOT_FOUND');
    expect(err.message).to.include(`SecretProviderClass ${ns}/elsewhere not found`);
  });

  it("mounts a class written through the deprecated v1alpha1 API (deploy/'s CRD serves both versions)", async () => {
    await cluster.admin.custom.createNamespacedCustomObject({
      group: SECRETS_STORE_GROUP.group,
      version: 'v1alpha1',
      namespace: ns,
      plural: 'secretproviderclasses',
      body: { ...spc('old-api'), apiVersion: 'secrets-store.csi.x-k8s.io/v1alpha1' },
    });
    const target = stack.targetPath('old-api');
    await stack.client.publish(stack.request(target, 'old-api', 'web-123-abc', ns, podUid));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal(
      await readFile(join(stack.providerRoot, 'db/password'), 'utf8'),
    );
    await stack.client.unpublish('vol-web-123-abc', target);
    expect(await mountsUnder(target)).to.deep.equal([]);
  });

  it('records sync_k8s_secret_total and k8s_secret_duration_sec', async () => {
    const text = await stack.metrics();
    expect(text).to.match(/^sync_k8s_secret_total\{provider="file",os_type="linux"\} 4$/m);
    expect(text).to.match(/^k8s_secret_duration_sec_count\{os_type="linux"\} 4$/m);
  });

  it('counts its Kubernetes API requests in rest_client_requests_total, by method and status code', async () => {
    // Calls of its own, so it passes run alone: a class that does not exist (GET 404), then a
    // publish that creates a pod status object (POST 201).
    await failure(
      stack.client.publish(stack.request(stack.targetPath('missing'), 'missing', 'web-123-abc', ns, podUid)),
    );
    await cluster.admin.custom.createNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      body: spc('counted'),
    });
    const target = stack.targetPath('counted');
    await stack.client.publish(stack.request(target, 'counted', 'web-123-abc', ns, podUid));
    await stack.client.unpublish('vol-web-123-abc', target);
    const text = await stack.metrics();
    const count = (method: string, code: string) =>
      Number(
        new RegExp(`^rest_client_requests_total\\{method="${method}",code="${code}"\\} (\\d+)$`, 'm').exec(text)?.[1] ??
          0,
      );
    // The pod status object was created; the missing class answered 404; the class cache listed.
    expect(count('POST', '201')).to.be.greaterThan(0);
    expect(count('GET', '200')).to.be.greaterThan(0);
    expect(count('GET', '404')).to.be.greaterThan(0);
  });

  it('unpublishes: the mount is gone', async () => {
    const target = stack.targetPath('web');
    await stack.client.unpublish('vol-web-123-abc', target);
    expect(await mountsUnder(target)).to.deep.equal([]);
  });
});
