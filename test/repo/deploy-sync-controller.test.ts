import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { parseSyncControllerConfig } from '../../sync-controller/config.js';
import { container, type Obj } from '../support/deploy-manifests.js';

// Static checks of deploy/sync-controller/ (no cluster here; the CRD and RBAC are applied to
// a real kube-apiserver by the sync controller's integration tests).

const DIR = join(fileURLToPath(new URL('../../../', import.meta.url)), 'deploy/sync-controller');
const objects = (file: string) => parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => d.toJS() as Obj);

describe('deploy/sync-controller', () => {
  const deployment = objects('deployment.yaml')[0] as Obj;
  const pod = deployment['spec'].template.spec as Obj;
  const controller = container(deployment, 'controller');
  const provider = container(deployment, 'provider-file');

  it('the kustomization lists every manifest of the folder', () => {
    const kustomization = objects('kustomization.yaml')[0] as Obj;
    expect([...(kustomization['resources'] as string[])].sort()).to.deep.equal([
      'deployment.yaml',
      'rbac.yaml',
      'secretsyncs-crd.yaml',
    ]);
  });

  it("the controller's flags parse: two replicas, leader election in the pod's namespace, rolled one at a time", () => {
    const config = parseSyncControllerConfig(controller['args'] as string[], {});
    expect(config.providerDir).to.equal('/provider');
    expect(config.leaderElection?.namespace).to.equal('');
    expect(deployment['spec'].replicas).to.equal(2);
    expect(deployment['spec'].strategy).to.deep.equal({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    expect(controller['command']).to.include('sync-controller');
  });

  it("the Lease is the controller's to write, in its own namespace", () => {
    const rbac = objects('rbac.yaml');
    const role = rbac.find((o) => o['kind'] === 'Role') as Obj;
    const binding = rbac.find((o) => o['kind'] === 'RoleBinding') as Obj;
    expect(role['metadata'].namespace).to.equal(deployment['metadata'].namespace);
    expect(role['rules']).to.deep.equal([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
    expect(binding['roleRef'].name).to.equal(role['metadata'].name);
    expect(binding['subjects'][0]).to.include({
      name: pod['serviceAccountName'],
      namespace: role['metadata'].namespace,
    });
  });

  it('the provider serves its socket in the directory the controller searches, on a shared volume', () => {
    const endpoint = (provider['args'] as string[]).find((a) => a.startsWith('--endpoint='));
    expect(endpoint).to.equal('--endpoint=unix:///provider/file.sock');
    const mountOf = (c: Obj) => (c['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === '/provider')?.['name'];
    expect(mountOf(controller)).to.equal('providers').and.to.equal(mountOf(provider));
    expect((pod['volumes'] as Obj[]).find((v) => v['name'] === 'providers')).to.have.property('emptyDir');
  });

  it("runs as the RBAC's ServiceAccount, passes its pod name and uid, probes /healthz and /readyz", () => {
    const sa = objects('rbac.yaml').find((o) => o['kind'] === 'ServiceAccount') as Obj;
    expect(pod['serviceAccountName']).to.equal(sa['metadata'].name);
    expect(deployment['metadata'].namespace).to.equal(sa['metadata'].namespace);
    const env = Object.fromEntries(
      (controller['env'] as Obj[]).map((e) => [e['name'], e['valueFrom']?.fieldRef?.fieldPath]),
    );
    expect(env).to.deep.equal({ SYNC_CONTROLLER_POD_NAME: 'metadata.name', SYNC_CONTROLLER_POD_UID: 'metadata.uid' });
    expect(controller['livenessProbe'].httpGet.path).to.equal('/healthz');
    expect(controller['readinessProbe'].httpGet.path).to.equal('/readyz');
    const health = (controller['ports'] as Obj[]).find((p) => p['name'] === 'health');
    expect(controller['args']).to.include(`--health-probe-bind-address=:${health?.['containerPort']}`);
  });
});
