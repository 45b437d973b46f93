import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { countLogged as count, untilLogged as logged } from '../../bin/child-process.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import {
  createBarePod,
  createSecretProviderClass,
  readPodStatus,
  SECRETS_STORE_GROUP,
} from '../support/kube-objects.js';
import { boundIdentity, clusterRolesIn, type BoundIdentity } from '../support/rbac-identity.js';
import { deployFile } from '../support/rbac-scenario.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { statusOf, until } from '../support/until.js';

// a Secret sync failure never fails NodePublishVolume. The files are
// written and the call returns OK; a Warning FailedToCreateSecret says what is wrong; the
// pod status object records it in status.secretSyncError; the sync is retried with
// backoff until it succeeds (the error is then cleared) or the volume is unpublished.

const DER = randomBytes(64);

type Obj = { data: { objectName: string; key: string }[]; secretName: string; type: string };

async function createClass(cluster: KubeCluster, ns: string, name: string, secretObjects: Obj[]): Promise<void> {
  await createSecretProviderClass(cluster, ns, name, { provider: 'scripted', secretObjects });
}

async function secretExists(cluster: KubeCluster, ns: string, name: string): Promise<boolean> {
  try {
    await cluster.admin.core.readNamespacedSecret({ name, namespace: ns });
    return true;
  } catch (err) {
    if (statusOf(err) === 404) return false;
    throw err;
  }
}

async function syncError(cluster: KubeCluster, ns: string, pod: string, spcName: string): Promise<string | undefined> {
  return (await readPodStatus(cluster, ns, pod, spcName)).status.secretSyncError;
}

async function warnings(cluster: KubeCluster, ns: string, reason: string, pod: string): Promise<string[]> {
  return (await cluster.admin.core.listNamespacedEvent({ namespace: ns })).items
    .filter((e) => e.reason === reason && e.involvedObject.name === pod && e.type === 'Warning')
    .map((e) => e.message ?? '');
}

describe('a Secret sync failure never fails the mount (real kube-apiserver)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ScriptedProvider;
  let ns: string;
  let tlsFailuresAtUnpublish = 0;
  /** A log line (JSON, one per line) saying a sync of `secretName` failed, whatever the order of its fields. */
  const syncFailed = (secretName: string) =>
    new RegExp(`(?:^|\\n)\\{(?=[^\\n]*"message":"Secret sync failed")(?=[^\\n]*"secretName":"${ns}/${secretName}")`);
  let tlsFailed: RegExp;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'syncfail');
    tlsFailed = syncFailed('tls-secret');
    stack = await startDriverStack({ kubeconfig: cluster.driverKubeconfig });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([
        { path: 'token', contents: 't1' },
        { path: 'cert.der', contents: DER.toString('latin1') },
      ]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  it('a non-PEM object synced as kubernetes.io/tls: mount OK, FailedToCreateSecret names the object, status records it; unpublish stops the retries', async () => {
    await createClass(cluster, ns, 'tls', [
      {
        secretName: 'tls-secret',
        type: 'kubernetes.io/tls',
        data: [
          { objectName: 'cert.der', key: 'tls.crt' },
          { objectName: 'cert.der', key: 'tls.key' },
        ],
      },
    ]);
    const uid = await createBarePod(cluster, ns, 'tls-pod');
    const target = stack.targetPath('tls');
    await stack.client.publish(stack.request(target, 'tls', 'tls-pod', ns, uid));
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('t1');
    const events = await warnings(cluster, ns, 'FailedToCreateSecret', 'tls-pod');
    expect(events).to.have.length(1);
    expect(events[0]).to.match(new RegExp(`^failed to sync Secret ${ns}/tls-secret: .*cert\\.der`));
    expect(await syncError(cluster, ns, 'tls-pod', 'tls')).to.equal(events[0]);
    expect(await warnings(cluster, ns, 'MountFailed', 'tls-pod')).to.deep.equal([]);
    expect(await secretExists(cluster, ns, 'tls-secret')).to.equal(false);
    await logged(stack.driver, tlsFailed, 1);
    await stack.client.unpublish('vol-tls-pod', target);
    tlsFailuresAtUnpublish = count(stack.driver, tlsFailed);
  });

  it('a misspelled objectName: mount OK, event and status name it; fixing the class makes the retry create the Secret and clear the error, with no new publish', async () => {
    await createClass(cluster, ns, 'typo', [
      { secretName: 'typo-secret', type: 'Opaque', data: [{ objectName: 'tokn', key: 'token' }] },
    ]);
    const uid = await createBarePod(cluster, ns, 'typo-pod');
    const target = stack.targetPath('typo');
    await stack.client.publish(stack.request(target, 'typo', 'typo-pod', ns, uid));
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('t1');
    const events = await warnings(cluster, ns, 'FailedToCreateSecret', 'typo-pod');
    expect(events).to.deep.equal([
      `failed to sync Secret ${ns}/typo-secret: secretObjects typo-secret: objectName "tokn" is not a file in the mounted volume`,
    ]);
    expect(await syncError(cluster, ns, 'typo-pod', 'typo')).to.equal(events[0]);
    // Retries are quiet while the failure stays the same.
    await logged(stack.driver, syncFailed('typo-secret'), 2);
    expect(await warnings(cluster, ns, 'FailedToCreateSecret', 'typo-pod')).to.have.length(1);

    const calls = provider.requests.length;
    const cls = (await cluster.admin.custom.getNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'typo',
    })) as KubernetesObject & { spec: { secretObjects: Obj[] } };
    cls.spec.secretObjects = [
      { secretName: 'typo-secret', type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] },
    ];
    await cluster.admin.custom.replaceNamespacedCustomObject({
      ...SECRETS_STORE_GROUP,
      namespace: ns,
      plural: 'secretproviderclasses',
      name: 'typo',
      body: cls,
    });
    await until('the retry to create the Secret', () => secretExists(cluster, ns, 'typo-secret'), 60_000);
    await until(
      'the recorded error to be cleared',
      async () => (await syncError(cluster, ns, 'typo-pod', 'typo')) === '',
    );
    expect(provider.requests.length, 'no publish and no provider call').to.equal(calls);
    await stack.client.unpublish('vol-typo-pod', target);
  });

  it('no retry ran for the unpublished volume meanwhile', () => {
    expect(count(stack.driver, tlsFailed)).to.equal(tlsFailuresAtUnpublish);
  });
});

describe('no RBAC for Secrets: the mount works, the sync waits for the grant (real kube-apiserver)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: DriverStack;
  let provider: ScriptedProvider;
  let ns: string;
  let identity: BoundIdentity | undefined;

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'norbac');
    // The driver as its own ServiceAccount with deploy/rbac.yaml's role, without rbac-secret-sync.yaml's.
    identity = await boundIdentity(cluster, 'driver-without-sync', await clusterRolesIn([deployFile('rbac.yaml')]));
    stack = await startDriverStack({ kubeconfig: identity.kubeconfig });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'token', contents: 't1' }]),
    );
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
    await identity?.remove();
  });

  it('mount OK, FailedToCreateSecret with the 403, status records it; after the grant the Secret appears with no kubelet call and the error is cleared', async () => {
    await createClass(cluster, ns, 'app', [
      { secretName: 'app-secret', type: 'Opaque', data: [{ objectName: 'token', key: 'token' }] },
    ]);
    const uid = await createBarePod(cluster, ns, 'app-pod');
    const target = stack.targetPath('app');
    await stack.client.publish(stack.request(target, 'app', 'app-pod', ns, uid));
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('t1');
    const events = await warnings(cluster, ns, 'FailedToCreateSecret', 'app-pod');
    expect(events).to.have.length(1);
    expect(events[0]).to.match(new RegExp(`^failed to sync Secret ${ns}/app-secret: .*HTTP 403`));
    expect(await syncError(cluster, ns, 'app-pod', 'app')).to.equal(events[0]);
    expect(await secretExists(cluster, ns, 'app-secret')).to.equal(false);

    const calls = provider.requests.length;
    await identity?.grant(await clusterRolesIn([deployFile('rbac-secret-sync.yaml')]));
    await until('the Secret to appear after the grant', () => secretExists(cluster, ns, 'app-secret'), 90_000);
    await until(
      'the recorded error to be cleared',
      async () => (await syncError(cluster, ns, 'app-pod', 'app')) === '',
    );
    expect(provider.requests.length, 'no kubelet call reached the provider').to.equal(calls);
    const secret = await cluster.admin.core.readNamespacedSecret({ name: 'app-secret', namespace: ns });
    expect(Buffer.from(secret.data?.['token'] ?? '', 'base64').toString()).to.equal('t1');
    await stack.client.unpublish('vol-app-pod', target);
  });
});
