import { expect } from 'chai';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { covers, FEATURE_CALLS, featuresOf } from '../../driver/k8s/api-rights.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';
import {
  auditedCalls,
  boundIdentity,
  clusterRolesIn,
  type BoundIdentity,
  type ClusterRoleManifest,
} from '../support/rbac-identity.js';
import {
  createPodWithVolumes,
  deployFile,
  ensureCsiDriverLikeUpstreamHelm,
  kubeletTokens,
  podEvents,
  requestsByMethod,
  untilPodEvent,
} from '../support/rbac-scenario.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { upstreamFile } from '../support/upstream-module.js';

const TOKENS_KEY = 'csi.storage.k8s.io/serviceAccount.tokens';

/** Upstream v1.6.1's driver roles, read from its release: the base role and the Secret sync role. */
async function upstreamRoles() {
  return clusterRolesIn([
    upstreamFile('deploy/rbac-secretproviderclass.yaml'),
    upstreamFile('deploy/rbac-secretprovidersyncing.yaml'),
  ]);
}

/** A ClusterRole's rules as `verb group/resource[ "name"]` keys. */
function ruleKeys(role: ClusterRoleManifest | undefined): string[] {
  const keys = new Set<string>();
  for (const r of (role?.rules ?? []) as {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
    resourceNames?: string[];
  }[]) {
    for (const g of r.apiGroups)
      for (const res of r.resources)
        for (const v of r.verbs)
          for (const n of r.resourceNames ?? [undefined]) keys.add(`${v} ${g}/${res}${n ? ` "${n}"` : ''}`);
  }
  return [...keys].sort();
}

describe("our roles compared with upstream v1.6.1's, rule by rule (its release files)", () => {
  const pairs: [string, string, string, string[], string[]][] = [
    // role, our file, upstream's file, rights upstream grants that we leave out (docs/upgrading-from-upstream.md), rights we add
    [
      'secretproviderclasses-role',
      'rbac.yaml',
      'deploy/rbac-secretproviderclass.yaml',
      [
        'get secrets-store.csi.x-k8s.io/secretproviderclasspodstatuses/status',
        'list storage.k8s.io/csidrivers "secrets-store.csi.k8s.io"',
        'patch secrets-store.csi.x-k8s.io/secretproviderclasspodstatuses/status',
        'update secrets-store.csi.x-k8s.io/secretproviderclasspodstatuses/status',
        'watch storage.k8s.io/csidrivers "secrets-store.csi.k8s.io"',
      ],
      [],
    ],
    [
      'secretprovidersyncing-role',
      'rbac-secret-sync.yaml',
      'deploy/rbac-secretprovidersyncing.yaml',
      ['delete /secrets'],
      [],
    ],
    [
      'secretproviderclasses-admin-role',
      'role-secretproviderclasses-admin.yaml',
      'deploy/role-secretproviderclasses-admin.yaml',
      [],
      [],
    ],
    [
      'secretproviderclasses-viewer-role',
      'role-secretproviderclasses-viewer.yaml',
      'deploy/role-secretproviderclasses-viewer.yaml',
      [],
      [],
    ],
    [
      'secretproviderclasspodstatuses-viewer-role',
      'role-secretproviderclasspodstatuses-viewer.yaml',
      'deploy/role-secretproviderclasspodstatuses-viewer.yaml',
      [],
      [],
    ],
  ];
  for (const [name, ours, theirs, leftOut, added] of pairs) {
    it(`${name}: same name; differs only where documented`, async () => {
      const our = (await clusterRolesIn([deployFile(ours)])).find((r) => r.metadata?.name === name);
      const their = (await clusterRolesIn([upstreamFile(theirs)])).find((r) => r.metadata?.name === name);
      expect(our, `ours in deploy/${ours}`).to.not.equal(undefined);
      expect(their, `upstream's in ${theirs}`).to.not.equal(undefined);
      const [o, t] = [ruleKeys(our), ruleKeys(their)];
      expect(
        t.filter((k) => !o.includes(k)),
        'upstream grants, we leave out',
      ).to.deep.equal(leftOut);
      expect(
        o.filter((k) => !t.includes(k)),
        'we grant, upstream does not',
      ).to.deep.equal(added);
      const labels = (r: ClusterRoleManifest | undefined) =>
        Object.entries(r?.metadata?.labels ?? {})
          .filter(([k]) => k.startsWith('rbac.authorization.k8s.io/'))
          .sort();
      expect(labels(our), 'aggregation labels').to.deep.equal(labels(their));
    });
  }
});

describe("upstream v1.6.1's RBAC with its Helm values (rotation on, tokenRequests, requiresRepublish) (real kube-apiserver)", function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let ns: string;

  async function createClass(name: string, provider: string, secretObjects: unknown[] = []): Promise<void> {
    await createSecretProviderClass(cluster, ns, name, {
      provider,
      parameters: { objects: '- objectName: a\n' },
      secretObjects,
    });
  }

  before(async () => {
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'upstream-rbac');
    await ensureCsiDriverLikeUpstreamHelm(cluster);
    await createClass('up', 'file', [
      { secretName: 'up-secret', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }] },
    ]);
  });

  it('an explicit --rotation-mode=reconciler is honoured: an error at start, then every refresh fails 403, and the events and log name create serviceaccounts/token and deploy/rbac-rotation.yaml', async () => {
    const identity = await boundIdentity(cluster, 'upstream-reconciler', await upstreamRoles());
    const stack = await startDriverStack({
      kubeconfig: identity.kubeconfig,
      providerFiles: { a: 'a1' },
      driverArgs: [
        '--enable-secret-sync',
        '--enable-secret-rotation',
        '--rotation-mode=reconciler',
        '--rotation-poll-interval=1s',
      ],
    });
    try {
      const atStart = stack.driver
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"level":"error"') && l.includes('--rotation-mode=reconciler'));
      expect(atStart).to.have.length(1);
      expect(atStart[0]).to.include(
        "the driver's RBAC lacks: create serviceaccounts/token (ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)",
      );
      expect(stack.driver.stderr()).to.include('rotation reconciler started');
      const uid = await createPodWithVolumes(cluster, ns, 'reconciled', ['up']);
      await stack.client.publish(stack.request(stack.targetPath('r'), 'up', 'reconciled', ns, uid));
      await untilLogged(stack.driver, /"message":"rotation refresh failed"/, 2);
      await untilPodEvent(cluster, ns, 'reconciled', (e) => e.startsWith('Warning MountRotationFailed:'));
      const failures = (await podEvents(cluster, ns, 'reconciled')).filter((e) =>
        e.startsWith('Warning MountRotationFailed:'),
      );
      expect(failures.length).to.be.greaterThan(0);
      for (const f of failures)
        expect(f)
          .to.include('HTTP 403')
          .and.include(
            "(the driver's RBAC lacks: create serviceaccounts/token; granted by ClusterRole secretproviderrotation-role in deploy/rbac-rotation.yaml)",
          );
      expect(stack.driver.stderr()).to.include("the driver's RBAC lacks: create serviceaccounts/token");
    } finally {
      await stack.stop();
      await identity.remove();
    }
  });

  describe('--rotation-mode=republish with the same roles', () => {
    let identity: BoundIdentity;
    let stack: DriverStack;
    let scripted: ScriptedProvider;
    let uid: string;
    let fileRequest: NodePublishVolumeRequest;
    let tokRequest: NodePublishVolumeRequest;
    const target = () => stack.targetPath('file');

    /** Writes (non-GET API requests) the driver made so far. */
    async function writes(): Promise<number> {
      return Object.entries(requestsByMethod(await stack.metrics()))
        .filter(([m]) => m !== 'GET')
        .reduce((n, [, c]) => n + c, 0);
    }
    async function apiRequests(): Promise<number> {
      return Object.values(requestsByMethod(await stack.metrics())).reduce((n, c) => n + c, 0);
    }
    /** The file's inode and mtime, and where ..data points: all stay when nothing is written. */
    async function fileState(): Promise<string> {
      const s = await stat(join(target(), 'a'));
      return `${s.ino} ${s.mtimeMs} ${(await stat(join(target(), '..data'))).ino}`;
    }
    /** Republishes as kubelet does every minute or so, until one runs as a rotation (the interval passed). */
    async function republishUntilDue(request: NodePublishVolumeRequest): Promise<number> {
      const ran = () => countLogged(stack.driver, /"message":"volume published".*"origin":"rotation"/);
      const failed = () => countLogged(stack.driver, /"message":"rotation on kubelet republish failed/);
      const before = ran() + failed();
      let calls = 0;
      while (ran() + failed() === before) {
        await stack.client.publish(request);
        calls++;
        if (ran() + failed() === before) await new Promise((r) => setTimeout(r, 100)); // kubelet's cadence, shortened
      }
      return calls;
    }

    before(async () => {
      identity = await boundIdentity(cluster, 'upstream-republish', await upstreamRoles());
      await createClass('tok', 'scripted');
      stack = await startDriverStack({
        kubeconfig: identity.kubeconfig,
        providerFiles: { a: 'a1' },
        driverArgs: [
          '--enable-secret-sync',
          '--enable-secret-rotation',
          '--rotation-mode=republish',
          '--rotation-poll-interval=1s',
        ],
      });
      scripted = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
        responseWith([{ path: 't', contents: 'x' }]),
      );
      uid = await createPodWithVolumes(cluster, ns, 'app', ['up', 'tok']);
      const tokens = await kubeletTokens(cluster, ns, 'app', uid);
      const withTokens = (r: NodePublishVolumeRequest) => ({
        ...r,
        volume_context: { ...r.volume_context, [TOKENS_KEY]: tokens },
      });
      fileRequest = withTokens(stack.request(target(), 'up', 'app', ns, uid));
      tokRequest = withTokens(stack.request(stack.targetPath('tok'), 'tok', 'app', ns, uid));
      await stack.client.publish(fileRequest);
      await stack.client.publish(tokRequest);
    });
    after(async () => {
      await scripted?.stop();
      await stack?.stop();
      await identity?.remove();
    });

    it("starts without warnings: requiresRepublish is set, and nothing needs a right upstream's roles lack", async () => {
      expect(stack.driver.stderr()).to.include('rotation on kubelet republish started');
      expect(stack.driver.stderr()).not.to.include('requiresRepublish: false');
      expect(stack.driver.stderr()).not.to.include('HTTP 403');
      expect(
        Buffer.from(
          (await cluster.admin.core.readNamespacedSecret({ name: 'up-secret', namespace: ns })).data?.['a'] ?? '',
          'base64',
        ).toString(),
      ).to.equal('a1');
    });

    it('a republish within the interval is a no-op: no provider call, no API request, no file write', async () => {
      // Right after a refresh of each volume (the interval is 1s), republish it again.
      await republishUntilDue(tokRequest);
      const providerCalls = scripted.requests.length;
      await stack.client.publish(tokRequest);
      expect(scripted.requests.length, 'provider calls').to.equal(providerCalls);
      await republishUntilDue(fileRequest);
      const [state, requests] = [await fileState(), await apiRequests()];
      await stack.client.publish(fileRequest);
      expect([await fileState(), await apiRequests()]).to.deep.equal([state, requests]);
      const published = stack.driver
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"message":"volume published"'));
      expect(published.at(-1)).to.include('"skipped":true');
    });

    it('a due republish with nothing changed sends the current versions and writes nothing: no file, no pod status, no Secret, no event', async () => {
      const [state, apiWrites, events, secretVersion] = [
        await fileState(),
        await writes(),
        await podEvents(cluster, ns, 'app'),
        (await cluster.admin.core.readNamespacedSecret({ name: 'up-secret', namespace: ns })).metadata?.resourceVersion,
      ];
      const status = await readPodStatus(cluster, ns, 'app', 'up');
      await republishUntilDue(fileRequest);
      expect(await fileState()).to.equal(state);
      expect(await writes(), 'API writes').to.equal(apiWrites);
      expect(await podEvents(cluster, ns, 'app')).to.deep.equal(events);
      expect(
        (await cluster.admin.core.readNamespacedSecret({ name: 'up-secret', namespace: ns })).metadata?.resourceVersion,
      ).to.equal(secretVersion);
      expect((await readPodStatus(cluster, ns, 'app', 'up')).metadata.resourceVersion).to.equal(
        status.metadata.resourceVersion,
      );
    });

    it("a due republish passes kubelet's tokens and the current object versions to the provider (no TokenRequest)", async () => {
      const before = scripted.requests.length;
      await republishUntilDue(tokRequest);
      const last = scripted.requests.slice(before).at(-1);
      expect(JSON.parse(last?.attributes ?? '{}')[TOKENS_KEY]).to.equal(tokRequest.volume_context?.[TOKENS_KEY]);
      expect((last?.current_object_version ?? []).map((v) => `${v.id}=${v.version}`)).to.deep.equal(['t=v1']);
    });

    it('a due republish after the secret changed rewrites the file, the pod status and the Secret, with MountRotationComplete and SecretRotationComplete once', async () => {
      await writeFile(join(stack.providerRoot, 'a'), 'a2');
      await republishUntilDue(fileRequest);
      expect(await readFile(join(target(), 'a'), 'utf8')).to.equal('a2');
      expect(
        Buffer.from(
          (await cluster.admin.core.readNamespacedSecret({ name: 'up-secret', namespace: ns })).data?.['a'] ?? '',
          'base64',
        ).toString(),
      ).to.equal('a2');
      const status = await readPodStatus(cluster, ns, 'app', 'up');
      expect(status.status.objects[0]?.version).to.equal(await readFile(join(target(), '.metadata/a'), 'utf8'));
      const events = await podEvents(cluster, ns, 'app');
      expect(events.filter((e) => e.startsWith('Normal MountRotationComplete:'))).to.deep.equal([
        'Normal MountRotationComplete: rotated mounted content for SecretProviderClass up (objects: a)',
      ]);
      expect(events.filter((e) => e.startsWith('Normal SecretRotationComplete:'))).to.have.length(1);
      await republishUntilDue(fileRequest);
      expect((await podEvents(cluster, ns, 'app')).filter((e) => e.includes('RotationComplete'))).to.have.length(2);
    });

    it('a due republish that fails keeps the old content, answers kubelet OK and reports MountRotationFailed', async () => {
      await rm(join(stack.providerRoot, 'a'));
      await republishUntilDue(fileRequest);
      expect(await readFile(join(target(), 'a'), 'utf8')).to.equal('a2');
      const failed = (await podEvents(cluster, ns, 'app')).filter((e) => e.startsWith('Warning MountRotationFailed:'));
      expect(failed).to.have.length(1);
      expect(failed[0]).to.include('SecretProviderClass').and.include(`${ns}/up`);
      expect(stack.driver.stderr()).to.include('rotation on kubelet republish failed; the old content stays mounted');
      await writeFile(join(stack.providerRoot, 'a'), 'a2');
    });

    it("every API call it made is one upstream's roles grant and our list for these features has (the API server's audit log)", async () => {
      const calls = await auditedCalls(cluster, identity.user);
      expect(calls.length).to.be.greaterThan(0);
      expect(
        calls.filter((c) => c.code === 403),
        'refused calls',
      ).to.deep.equal([]);
      const features = featuresOf({ enableSecretSync: true, enableSecretRotation: true, rotationMode: 'republish' });
      const listed = features.flatMap((f) => FEATURE_CALLS[f]);
      expect(calls.filter((c) => !listed.some((r) => covers(r, c)))).to.deep.equal([]);
      // No token requests, no cluster-wide watch of nodePublishSecretRef Secrets: kubelet passes
      // both. Secret sync lists and watches the used=true Secrets of the synced volume's namespace only.
      expect(
        calls.filter(
          (c) =>
            c.resource === 'serviceaccounts/token' ||
            (c.resource === 'secrets' && (c.verb === 'list' || c.verb === 'watch') && c.namespace !== ns),
        ),
      ).to.deep.equal([]);
    });
  });
});
