import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseDriverConfig } from '../../driver/config.js';
import {
  covers,
  FEATURE_CALLS,
  featuresOf,
  GRANTED_BEYOND_CALLS,
  GRANTED_TO_EVERY_USER,
  SHIPPED_ROLES,
  type ApiRight,
} from '../../driver/k8s/api-rights.js';

/** The calls of these features that a role must grant (not those Kubernetes grants every user). */
function roleGrantedCalls(features: readonly (keyof typeof FEATURE_CALLS)[]): ApiRight[] {
  return features.flatMap((f) => FEATURE_CALLS[f]).filter((r) => !GRANTED_TO_EVERY_USER.some((g) => covers(g, r)));
}
import {
  container,
  DEPLOY,
  DRIVER_DS,
  expandArgs,
  find,
  grants,
  MANIFESTS,
  parseFile,
  rightKey,
  SA,
  type Manifest,
  type Obj,
} from '../support/deploy-manifests.js';

// Static checks of deploy/'s RBAC against driver/k8s/api-rights.ts (no cluster here; the
// real API server's view is in test/integration/kubernetes-rbac.test.ts).

describe('deploy manifests', () => {
  describe('RBAC', () => {
    const kustomized = () => (parseFile(join(DEPLOY, 'kustomization.yaml'))[0] as Obj)['resources'] as string[];
    const roles = () => MANIFESTS.filter((m) => m.obj['kind'] === 'ClusterRole' || m.obj['kind'] === 'Role');

    it('the driver ServiceAccount lives in kube-system and the DaemonSet uses it', () => {
      expect(find('ServiceAccount', SA.name).obj['metadata'].namespace).to.equal(SA.namespace);
      expect(DRIVER_DS()['spec'].template.spec.serviceAccountName).to.equal(SA.name);
    });

    for (const shipped of SHIPPED_ROLES) {
      it(`${shipped.role} in ${shipped.file} grants exactly the rights driver/k8s/api-rights.ts lists for it (one role per file)`, () => {
        const role = find('ClusterRole', shipped.role);
        expect(`deploy/${role.file}`).to.equal(shipped.file);
        expect(roles().filter((m) => m.file === role.file)).to.have.lengthOf(1);
        expect(grants(role.obj)).to.deep.equal([...new Set(shipped.rights.map(rightKey))].sort());
      });

      it(`${shipped.role} is bound to the driver ServiceAccount in ${shipped.file}, and nothing else is`, () => {
        const bindings = MANIFESTS.filter(
          (m) => m.obj['kind'] === 'ClusterRoleBinding' && m.obj['roleRef']?.name === shipped.role,
        );
        expect(bindings).to.have.lengthOf(1);
        const binding = bindings[0] as Manifest;
        expect(`deploy/${binding.file}`).to.equal(shipped.file);
        expect(binding.obj['roleRef']).to.deep.equal({
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: shipped.role,
        });
        expect(binding.obj['subjects']).to.deep.equal([SA]);
      });
    }

    it("the driver's roles are all listed in api-rights.ts, and no other binding names the driver", () => {
      const driverBound = MANIFESTS.filter(
        (m) => m.obj['kind'] === 'ClusterRoleBinding' || m.obj['kind'] === 'RoleBinding',
      ).filter((m) =>
        (m.obj['subjects'] as Obj[] | undefined)?.some((s) => s['kind'] === 'ServiceAccount' && s['name'] === SA.name),
      );
      expect(driverBound.map((m) => m.obj['roleRef'].name).sort()).to.deep.equal(
        SHIPPED_ROLES.map((r) => r.role).sort(),
      );
    });

    it('Secrets are granted only by the sync and rotation reconciler roles, and the SecretSync controller', () => {
      const withSecrets = roles().filter((m) =>
        grants(m.obj).some((k) => / \/(secrets|\*)$/.test(k) || k.includes(' */')),
      );
      expect(withSecrets.map((m) => m.file).sort()).to.deep.equal([
        'rbac-rotation.yaml',
        'rbac-secret-sync.yaml',
        'sync-controller/rbac.yaml',
      ]);
    });

    it("the default kustomization grants what the DaemonSet's flags need: no workload restarts, the rest as upstream's aggregated roles", () => {
      const config = parseDriverConfig(
        expandArgs(container(DRIVER_DS(), 'secrets-store'), { KUBE_NODE_NAME: 'n' }),
        {},
      );
      const applied = SHIPPED_ROLES.filter((r) => kustomized().includes(r.file.replace(/^deploy\//, '')));
      expect(applied.map((r) => r.feature)).to.deep.equal(featuresOf(config));
      expect(kustomized()).to.not.include('rbac-workload-restart.yaml');
      expect(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')).to.match(
        /^\s*#\s*- rbac-workload-restart\.yaml$/m,
      );
      const granted = applied.flatMap((r) => r.rights);
      const needed = roleGrantedCalls(featuresOf(config));
      for (const right of needed)
        expect(
          granted.some((g) => covers(g, right)),
          `${rightKey(right)} is granted`,
        ).to.equal(true);
      const extra = granted.filter((g) => !needed.some((n) => covers(g, n) && covers(n, g)));
      expect(extra.map(rightKey).sort(), 'granted beyond the calls, each with a reason').to.deep.equal(
        GRANTED_BEYOND_CALLS.map((x) => rightKey(x.right))
          .filter((k) => extra.map(rightKey).includes(k))
          .sort(),
      );
    });

    it("ships upstream's aggregated roles for namespace users, with upstream's names and labels", () => {
      const aggregated: Record<string, { file: string; labels: string[]; rights: string[] }> = {
        'secretproviderclasses-admin-role': {
          file: 'role-secretproviderclasses-admin.yaml',
          labels: ['aggregate-to-admin', 'aggregate-to-edit'],
          rights: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'].map(
            (v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasses`,
          ),
        },
        'secretproviderclasses-viewer-role': {
          file: 'role-secretproviderclasses-viewer.yaml',
          labels: ['aggregate-to-view'],
          rights: ['get', 'list', 'watch'].map((v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasses`),
        },
        'secretproviderclasspodstatuses-viewer-role': {
          file: 'role-secretproviderclasspodstatuses-viewer.yaml',
          labels: ['aggregate-to-view'],
          rights: ['get', 'list', 'watch'].map((v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasspodstatuses`),
        },
      };
      for (const [name, want] of Object.entries(aggregated)) {
        const role = find('ClusterRole', name);
        expect(role.file, name).to.equal(want.file);
        expect(kustomized(), name).to.include(want.file);
        const labels = Object.entries(role.obj['metadata'].labels as Record<string, string>)
          .filter(([k]) => k.startsWith('rbac.authorization.k8s.io/'))
          .map(([k, v]) => `${k.split('/')[1]}=${v}`);
        expect(labels.sort(), name).to.deep.equal(want.labels.map((l) => `${l}=true`).sort());
        expect(grants(role.obj), name).to.deep.equal(want.rights.sort());
      }
    });
  });

  describe('examples/republish overlay (--rotation-mode=republish)', () => {
    /** Applies the overlay's patches to the base objects, for the patch forms it uses (JSON patch replace/test/add, $patch: delete). */
    function applyOverlay(): Obj[] {
      const overlay = parseFile(join(DEPLOY, 'examples/republish/kustomization.yaml'))[0] as Obj;
      expect(overlay['resources']).to.deep.equal(['../..']);
      const kustomized = (parseFile(join(DEPLOY, 'kustomization.yaml'))[0] as Obj)['resources'] as string[];
      let objects: Obj[] = structuredClone(kustomized.flatMap((f) => parseFile(join(DEPLOY, f))));
      for (const { target, patch } of overlay['patches'] as { target?: Obj; patch: string }[]) {
        const doc = parseAllDocuments(patch)[0]?.toJS() as Obj | Obj[];
        if (!Array.isArray(doc)) {
          expect(doc['$patch']).to.equal('delete');
          const before = objects.length;
          objects = objects.filter((o) => !(o['kind'] === doc['kind'] && o['metadata']?.name === doc['metadata'].name));
          expect(objects.length, `${doc['kind']} ${doc['metadata'].name} exists to delete`).to.equal(before - 1);
          continue;
        }
        const matches = objects.filter(
          (o) => o['kind'] === target?.['kind'] && o['metadata']?.name === target?.['name'],
        );
        expect(matches, JSON.stringify(target)).to.have.lengthOf(1);
        for (const op of doc) {
          const parts = String(op['path']).split('/').slice(1);
          const last = parts.pop() as string;
          let at = matches[0] as Obj;
          for (const p of parts) {
            at = at[p];
            expect(at, `${op['path']} resolves`).to.not.equal(undefined);
          }
          if (op['op'] === 'test') expect(at[last]).to.deep.equal(op['value']);
          else if (op['op'] === 'replace') {
            expect(at, `${op['path']} exists`).to.have.property(last);
            at[last] = op['value'];
          } else if (op['op'] === 'add' && last === '-') (at as unknown[]).push(op['value']);
          else expect.fail(`unsupported op ${op['op']} ${op['path']}`);
        }
      }
      return objects;
    }

    it("sets requiresRepublish, runs the driver in republish mode and leaves out the reconciler's role", () => {
      const objects = applyOverlay();
      expect(objects.find((o) => o['kind'] === 'CSIDriver')?.['spec'].requiresRepublish).to.equal(true);
      const ds = objects.find((o) => o['kind'] === 'DaemonSet' && o['metadata'].name === 'csi-secrets-store') as Obj;
      const config = parseDriverConfig(expandArgs(container(ds, 'secrets-store'), { KUBE_NODE_NAME: 'n' }), {});
      expect([config.enableSecretRotation, config.rotationMode]).to.deep.equal([true, 'republish']);
      const roles = objects.filter((o) => o['kind'] === 'ClusterRole').map((o) => o['metadata'].name as string);
      const driverRoles = SHIPPED_ROLES.filter((r) => roles.includes(r.role));
      const granted = driverRoles.flatMap((r) => r.rights);
      for (const right of roleGrantedCalls(featuresOf(config)))
        expect(
          granted.some((g) => covers(g, right)),
          rightKey(right),
        ).to.equal(true);
      expect(driverRoles.map((r) => r.file)).to.deep.equal(['deploy/rbac.yaml', 'deploy/rbac-secret-sync.yaml']);
      expect(granted.filter((g) => g.resource === 'serviceaccounts/token')).to.deep.equal([]);
    });
  });
});
