import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { untilLogged } from '../../bin/child-process.js';
import {
  covers,
  describeRight,
  FEATURE_CALLS,
  featuresOf,
  SHIPPED_ROLES,
  type ApiRight,
} from '../../driver/k8s/api-rights.js';
import { isGrpcCallError } from '../../lib/errors.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import {
  createNamespace,
  DRIVER_USER,
  kustomizationRbacFiles,
  sharedKubeCluster,
  type KubeCluster,
} from '../support/kube-cluster.js';
import { createDeploymentAndReplicaSet, createSecretProviderClass } from '../support/kube-objects.js';
import {
  allowed,
  auditedCalls,
  boundIdentity,
  clusterRolesIn,
  type BoundIdentity,
  type ClusterRoleManifest,
} from '../support/rbac-identity.js';
import {
  createPodWithVolumes,
  daemonSetConfig,
  deployFile,
  ensureCsiDriverLikeUpstreamHelm,
  podEvents,
  untilPodEvent,
} from '../support/rbac-scenario.js';

/** `role` with `verbs` removed from its rules on `resource`. */
function without(role: ClusterRoleManifest, resource: string, verbs: readonly string[]): ClusterRoleManifest {
  const rules = (role.rules as { resources: string[]; verbs: string[] }[])
    .map((r) => (r.resources.includes(resource) ? { ...r, verbs: r.verbs.filter((v) => !verbs.includes(v)) } : r))
    .filter((r) => r.verbs.length > 0);
  return { ...role, rules };
}

/** The `error` field of the first line of the driver's log with `message` whose error mentions `text`. */
function loggedLine(stack: DriverStack, message: string, text: string): string | undefined {
  for (const line of stack.driver.stderr().split('\n')) {
    if (!line.includes(`"message":"${message}"`)) continue;
    const error = (JSON.parse(line) as { error?: unknown }).error;
    if (typeof error === 'string' && error.includes(text)) return error;
  }
  return undefined;
}

describe('a driver missing an RBAC right names it: event on the pod and a log line (real kube-apiserver, reduced role sets)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let ns: string;
  let identity: BoundIdentity | undefined;
  let stack: DriverStack | undefined;
  let base: ClusterRoleManifest;

  async function createClass(
    name: string,
    spec: Record<string, unknown>,
    annotations: Record<string, string> = {},
  ): Promise<void> {
    await createSecretProviderClass(cluster, ns, name, spec, annotations);
  }

  /** A driver whose identity is bound to exactly `roles`. */
  async function driverWith(prefix: string, roles: ClusterRoleManifest[], driverArgs: string[]): Promise<DriverStack> {
    identity = await boundIdentity(cluster, prefix, roles);
    stack = await startDriverStack({ kubeconfig: identity.kubeconfig, driverArgs, providerFiles: { a: 'a1' } });
    return stack;
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'rbac-missing');
    await ensureCsiDriverLikeUpstreamHelm(cluster);
    base = (await clusterRolesIn([deployFile('rbac.yaml')]))[0] as ClusterRoleManifest;
    await createClass('plain', { provider: 'file', parameters: { objects: '- objectName: a\n' } });
  });
  afterEach(async () => {
    await stack?.stop();
    await identity?.remove();
    stack = undefined;
    identity = undefined;
  });

  it('rotation reconciler (asked for) without its role: MountRotationFailed names create serviceaccounts/token and deploy/rbac-rotation.yaml', async () => {
    const s = await driverWith(
      'rbac-notoken',
      [base, ...(await clusterRolesIn([deployFile('rbac-secret-sync.yaml')]))],
      // Asked for explicitly: auto would rotate on kubelet's republish (the CSIDriver has requiresRepublish).
      ['--enable-secret-rotation', '--rotation-mode=reconciler', '--rotation-poll-interval=1s'],
    );
    const uid = await createPodWithVolumes(cluster, ns, 'tok-pod', ['plain']);
    await s.client.publish(s.request(s.targetPath('tok'), 'plain', 'tok-pod', ns, uid));
    await untilLogged(s.driver, /"message":"rotation refresh failed"/);
    const want =
      "(the driver's RBAC lacks: create serviceaccounts/token; granted by ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)";
    expect(await untilPodEvent(cluster, ns, 'tok-pod', (e) => e.startsWith('Warning MountRotationFailed:'))).to.include(
      want,
    );
    expect(loggedLine(s, 'rotation refresh failed', 'serviceaccounts/token')).to.include(want);
    expect(await readFile(join(s.targetPath('tok'), 'a'), 'utf8'), 'the mounted content stays').to.equal('a1');
  });

  it('Secret sync without its role: a Warning event and a log line name the Secret right and deploy/rbac-secret-sync.yaml', async () => {
    const s = await driverWith('rbac-nosync', [base], ['--enable-secret-sync']);
    await createClass('synced', {
      provider: 'file',
      parameters: { objects: '- objectName: a\n' },
      secretObjects: [{ secretName: 'synced', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }] }],
    });
    const uid = await createPodWithVolumes(cluster, ns, 'sync-pod', ['synced']);
    // A sync failure never fails the mount; it is reported, naming the missing right.
    await s.client.publish(s.request(s.targetPath('sync'), 'synced', 'sync-pod', ns, uid)).catch((err: unknown) => {
      if (!isGrpcCallError(err)) throw err;
    });
    const warning = await untilPodEvent(
      cluster,
      ns,
      'sync-pod',
      (e) => e.startsWith('Warning') && e.includes('deploy/rbac-secret-sync.yaml'),
    );
    expect(warning).to.match(
      /the driver's RBAC lacks: (get|create) secrets; granted by ClusterRole secretprovidersyncing-role in deploy\/rbac-secret-sync\.yaml/,
    );
    expect(
      s.driver
        .stderr()
        .split('\n')
        .some(
          (l) =>
            l.includes('"level":"warn"') &&
            /RBAC lacks: (get|create) secrets; granted by ClusterRole secretprovidersyncing-role/.test(l),
        ),
    ).to.equal(true);
  });

  it('workload restart without its opt-in role: WorkloadRestartFailed names get replicasets and deploy/rbac-workload-restart.yaml; the rotation itself happens', async () => {
    const s = await driverWith(
      'rbac-norestart',
      [base, ...(await clusterRolesIn([deployFile('rbac-rotation.yaml')]))],
      ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
    );
    await createClass(
      'restart',
      { provider: 'file', parameters: { objects: '- objectName: a\n' } },
      { 'secrets-store.csi.k8s.io/restart-on-rotation': 'true' },
    );
    const { rsUid } = await createDeploymentAndReplicaSet(cluster, ns, 'web');
    const uid = await createPodWithVolumes(cluster, ns, 'web-1-a', ['restart'], {
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: rsUid, controller: true }],
    });
    await s.client.publish(s.request(s.targetPath('web'), 'restart', 'web-1-a', ns, uid));
    await writeFile(join(s.providerRoot, 'a'), 'a2');
    await untilLogged(s.driver, /"message":"could not restart workload after rotation"/);
    const want =
      '(the driver\'s RBAC lacks: get replicasets in API group "apps"; granted by ClusterRole secretproviderrestart-role in deploy/rbac-workload-restart.yaml)';
    expect(
      await untilPodEvent(cluster, ns, 'web-1-a', (e) => e.startsWith('Warning WorkloadRestartFailed:')),
    ).to.include(want);
    expect(loggedLine(s, 'could not restart workload after rotation', 'replicasets')).to.include(want);
    expect(await readFile(join(s.targetPath('web'), 'a'), 'utf8')).to.equal('a2');
    await writeFile(join(s.providerRoot, 'a'), 'a1');
  });

  it('pod status writes refused: the mount fails PERMISSION_DENIED and MountFailed names create secretproviderclasspodstatuses and deploy/rbac.yaml', async () => {
    const s = await driverWith(
      'rbac-nostatus',
      [without(base, 'secretproviderclasspodstatuses', ['create', 'update', 'patch'])],
      [],
    );
    const uid = await createPodWithVolumes(cluster, ns, 'status-pod', ['plain']);
    const err = await s.client.publish(s.request(s.targetPath('status'), 'plain', 'status-pod', ns, uid)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrpcCallError(err) && err.code).to.equal(7);
    const want =
      '(the driver\'s RBAC lacks: create secretproviderclasspodstatuses in API group "secrets-store.csi.x-k8s.io"; granted by ClusterRole secretproviderclasses-role in deploy/rbac.yaml)';
    expect((await podEvents(cluster, ns, 'status-pod')).find((e) => e.startsWith('Warning MountFailed:'))).to.include(
      want,
    );
    expect(loggedLine(s, 'NodePublishVolume failed', 'secretproviderclasspodstatuses')).to.include(want);
  });

  it("events refused: logged only, naming create events and deploy/rbac.yaml; the operation's outcome is unchanged", async () => {
    const s = await driverWith('rbac-noevents', [without(base, 'events', ['create', 'patch'])], []);
    const uid = await createPodWithVolumes(cluster, ns, 'event-pod', ['plain']);
    const err = await s.client.publish(s.request(s.targetPath('event'), 'no-such-class', 'event-pod', ns, uid)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isGrpcCallError(err) && err.code, 'NOT_FOUND, not the event failure').to.equal(5);
    expect(loggedLine(s, 'could not record event', 'events')).to.include(
      "(the driver's RBAC lacks: create events; granted by ClusterRole secretproviderclasses-role in deploy/rbac.yaml)",
    );
    expect(await podEvents(cluster, ns, 'event-pod')).to.deep.equal([]);
  });
});

describe('the default role set (deploy/kustomization.yaml) grants what the default flags need (real kube-apiserver)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;

  /** The right as a SubjectAccessReview asks it (resource and subresource apart). */
  function question(right: ApiRight) {
    const [resource, subresource] = right.resource.split('/');
    return { verb: right.verb, group: right.group, resource: resource ?? '', subresource, name: right.name };
  }
  const driverGroups = ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'];

  before(async () => {
    cluster = await sharedKubeCluster();
  });

  it("every call of the DaemonSet's features is allowed for the driver ServiceAccount; restarts and other rights are not", async () => {
    const { config } = await daemonSetConfig();
    const features = featuresOf(config);
    expect(features).to.deep.equal(['publish', 'secret-sync', 'rotation-reconciler']);
    for (const right of features.flatMap((f) => FEATURE_CALLS[f])) {
      expect(await allowed(cluster, DRIVER_USER, question(right), driverGroups), describeRight(right)).to.equal(true);
    }
    const denied: ApiRight[] = [
      ...FEATURE_CALLS['workload-restart'],
      { verb: 'delete', group: '', resource: 'secrets' },
      { verb: 'create', group: '', resource: 'serviceaccounts' },
      { verb: 'create', group: '', resource: 'pods' },
      { verb: 'update', group: '', resource: 'pods' },
      { verb: 'get', group: 'storage.k8s.io', resource: 'csidrivers', name: 'another-driver' },
      { verb: 'create', group: 'secrets-store.csi.x-k8s.io', resource: 'secretproviderclasses' },
      { verb: 'update', group: 'secrets-store.csi.x-k8s.io', resource: 'secretproviderclasspodstatuses/status' },
    ];
    for (const right of denied)
      expect(await allowed(cluster, DRIVER_USER, question(right), driverGroups), describeRight(right)).to.equal(false);
  });

  it("a driver with the DaemonSet's flags and the default roles calls nothing else (the API server's audit log)", async () => {
    const { config } = await daemonSetConfig();
    const files = await kustomizationRbacFiles();
    const roles = SHIPPED_ROLES.filter((r) => files.includes(r.file.replace(/^deploy\//, '')));
    const identity = await boundIdentity(
      cluster,
      'rbac-default',
      await clusterRolesIn(roles.map((r) => deployFile(r.file.replace(/^deploy\//, '')))),
    );
    const ns = await createNamespace(cluster, 'rbac-default-ns');
    await ensureCsiDriverLikeUpstreamHelm(cluster);
    // The DaemonSet's feature flags, with a short interval so rotation runs during the test.
    const stack = await startDriverStack({
      kubeconfig: identity.kubeconfig,
      providerFiles: { a: 'a1' },
      driverArgs: [
        `--enable-secret-sync=${config.enableSecretSync}`,
        `--enable-secret-rotation=${config.enableSecretRotation}`,
        `--rotation-mode=${config.rotationMode}`,
        '--rotation-poll-interval=1s',
      ],
    });
    try {
      await cluster.admin.core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'creds', labels: { 'secrets-store.csi.k8s.io/used': 'true' } },
          stringData: { user: 'u' },
        },
      });
      await createSecretProviderClass(cluster, ns, 'all', {
        provider: 'file',
        parameters: { objects: '- objectName: a\n' },
        secretObjects: [{ secretName: 'all', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }] }],
      });
      const uid = await createPodWithVolumes(cluster, ns, 'app', ['all'], {}, 'creds');
      const target = stack.targetPath('all');
      await stack.client.publish(stack.request(target, 'all', 'app', ns, uid));
      await writeFile(join(stack.providerRoot, 'a'), 'a2');
      await untilLogged(stack.driver, /"message":"volume rotated"/);
      // A failed first publish: a MountFailed event (and the pod status clean-up path).
      await stack.client
        .publish(stack.request(stack.targetPath('missing'), 'missing', 'app', ns, uid))
        .catch(() => undefined);
      await stack.client.unpublish('vol-app', target);
    } finally {
      await stack.stop();
      await identity.remove();
    }
    const calls = await auditedCalls(cluster, identity.user);
    const allowedCalls = featuresOf(config).flatMap((f) => FEATURE_CALLS[f]);
    const outside = calls.filter((c) => !allowedCalls.some((r) => covers(r, c)));
    expect(outside, "calls outside the features' list in driver/k8s/api-rights.ts").to.deep.equal([]);
    expect(
      calls.filter((c) => c.code === 403),
      'no call refused',
    ).to.deep.equal([]);
    const made = new Set(calls.map((c) => `${c.verb} ${c.resource}`));
    for (const used of [
      'create serviceaccounts/token',
      'watch secrets',
      'create secrets',
      'update secrets',
      'create secretproviderclasspodstatuses',
      'patch secretproviderclasspodstatuses',
      'create events',
      'watch pods',
      'get csidrivers',
    ]) {
      expect(made, `the test exercised ${used}`).to.include(used);
    }
  });
});
