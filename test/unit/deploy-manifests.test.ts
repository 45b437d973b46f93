import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DRIVER_FLAGS, parseDriverConfig } from '../../driver/config.js';
import { covers, FEATURE_CALLS, featuresOf, GRANTED_BEYOND_CALLS, SHIPPED_ROLES, type ApiRight } from '../../driver/k8s/api-rights.js';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { parseFlags, stringFlag } from '../../proto/runtime/flags.js';
import { NODE_FLAGS } from '../../proto/runtime/node-flags.js';
import { socketPathFromEndpoint } from '../../proto/runtime/unix-socket.js';
import { parseFileObjects } from '../../providers/file/config.js';
import { fileProviderDefinition } from '../../providers/file/main.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';

// Static checks of deploy/ and the Dockerfiles: no cluster and no Docker engine here, so
// these assert the facts a broken manifest would get wrong, against the code's own tables.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DEPLOY = join(REPO, 'deploy');

/** A manifest object: untyped YAML. */
type Obj = Record<string, any>;
interface Manifest { file: string; obj: Obj }

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

function parseFile(path: string): Obj[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${relative(REPO, path)}: ${doc.errors[0]?.message}`);
    return doc.toJS() as Obj;
  }).filter((o) => o !== null && typeof o === 'object');
}

const FILES = yamlFiles(DEPLOY);
const MANIFESTS: Manifest[] = FILES.flatMap((path) => parseFile(path).map((obj) => ({ file: relative(DEPLOY, path), obj })));

function find(kind: string, name: string): Manifest {
  const found = MANIFESTS.filter((m) => m.obj['kind'] === kind && m.obj['metadata']?.name === name);
  expect(found, `${kind} ${name}`).to.have.lengthOf(1);
  return found[0] as Manifest;
}

function container(ds: Obj, name: string, init = false): Obj {
  const list: Obj[] = ds['spec'].template.spec[init ? 'initContainers' : 'containers'] ?? [];
  const c = list.find((x) => x['name'] === name);
  expect(c, `container ${name}`).to.not.equal(undefined);
  return c as Obj;
}

/** Expands $(VAR) references the way kubelet does, from the container's literal env values. */
function expandArgs(c: Obj, extraEnv: Record<string, string>): string[] {
  const env: Record<string, string> = { ...extraEnv };
  for (const e of (c['env'] ?? []) as Obj[]) if (typeof e['value'] === 'string') env[e['name']] = e['value'];
  return (c['args'] as string[]).map((a) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m));
}

/** The host path behind a container path: the volumeMount that holds it and its hostPath volume. */
function hostPathOf(ds: Obj, c: Obj, containerPath: string): string {
  const mounts = ((c['volumeMounts'] ?? []) as Obj[])
    .filter((m) => containerPath === m['mountPath'] || containerPath.startsWith(`${String(m['mountPath']).replace(/\/$/, '')}/`))
    .sort((a, b) => String(b['mountPath']).length - String(a['mountPath']).length);
  const mount = mounts[0];
  expect(mount, `a volumeMount holding ${containerPath} in ${c['name']}`).to.not.equal(undefined);
  const volume = ((ds['spec'].template.spec.volumes ?? []) as Obj[]).find((v) => v['name'] === mount?.['name']);
  expect(volume?.['hostPath'], `volume ${mount?.['name']} is a hostPath`).to.be.an('object');
  const rest = posix.relative(String(mount?.['mountPath']), containerPath);
  return posix.normalize(posix.join(String(volume?.['hostPath'].path), rest)).replace(/\/$/, '');
}

/** A ClusterRole's rules as rights, one per verb, resource and name (sorted, comparable). */
function grants(role: Obj): string[] {
  const out = new Set<string>();
  for (const rule of role['rules'] as Obj[]) {
    for (const group of rule['apiGroups'] as string[]) {
      for (const resource of rule['resources'] as string[]) {
        for (const verb of rule['verbs'] as string[]) {
          for (const name of (rule['resourceNames'] as string[] | undefined) ?? [undefined]) out.add(rightKey({ verb, group, resource, ...(name !== undefined ? { name } : {}) }));
        }
      }
    }
  }
  return [...out].sort();
}

function rightKey(r: ApiRight): string {
  return `${r.verb} ${r.group}/${r.resource}${r.name !== undefined ? ` "${r.name}"` : ''}`;
}

const CSI_DRIVER_NAME = 'secrets-store.csi.k8s.io';
/** Manifests the default kustomization leaves out on purpose (listed there, commented). */
const OPT_IN = ['rbac-workload-restart.yaml'];
const SA = { kind: 'ServiceAccount', name: 'secrets-store-csi-driver', namespace: 'kube-system' };
const DRIVER_DS = () => find('DaemonSet', 'csi-secrets-store').obj;
const PROVIDER_DS = () => find('DaemonSet', 'csi-secrets-store-provider-file').obj;
describe('deploy manifests', () => {
  it('every deploy/**/*.yaml parses, and every object has apiVersion, kind and a name', () => {
    expect(FILES.length).to.be.greaterThan(8);
    for (const { file, obj } of MANIFESTS) {
      expect(obj['apiVersion'], file).to.be.a('string');
      expect(obj['kind'], file).to.be.a('string');
      if (obj['kind'] !== 'Kustomization') expect(obj['metadata']?.name, file).to.be.a('string');
    }
  });

  it('kustomization.yaml lists every manifest that exists, and all of them except examples and opt-ins', () => {
    const kustomization = parseFile(join(DEPLOY, 'kustomization.yaml'))[0] as Obj;
    const resources = kustomization['resources'] as string[];
    for (const r of resources) expect(existsSync(join(DEPLOY, r)), `deploy/${r}`).to.equal(true);
    const expected = FILES.map((f) => relative(DEPLOY, f))
      .filter((f) => f !== 'kustomization.yaml' && !f.startsWith('examples/') && !OPT_IN.includes(f));
    expect([...resources].sort()).to.deep.equal(expected.sort());
    expect(resources.some((r) => r.startsWith('examples/'))).to.equal(false);
  });

  describe('CSIDriver', () => {
    it('has the fields kubelet needs for inline secret volumes', () => {
      const spec = find('CSIDriver', CSI_DRIVER_NAME).obj['spec'] as Obj;
      expect(spec['podInfoOnMount']).to.equal(true);
      expect(spec['attachRequired']).to.equal(false);
      expect(spec['volumeLifecycleModes']).to.deep.equal(['Ephemeral']);
      // The rotation reconciler refreshes volumes itself; republish mode sets it (examples/republish).
      expect(spec['requiresRepublish']).to.equal(false);
      // The pod's fsGroup reaches the driver as volume_mount_group (VOLUME_MOUNT_GROUP), upstream issue #858.
      expect(spec['fsGroupPolicy']).to.equal('File');
    });

    it('has a commented tokenRequests example', () => {
      expect(readFileSync(join(DEPLOY, 'csidriver.yaml'), 'utf8')).to.match(/^\s*#\s*tokenRequests:/m);
    });
  });

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
        const bindings = MANIFESTS.filter((m) => m.obj['kind'] === 'ClusterRoleBinding' && m.obj['roleRef']?.name === shipped.role);
        expect(bindings).to.have.lengthOf(1);
        const binding = bindings[0] as Manifest;
        expect(`deploy/${binding.file}`).to.equal(shipped.file);
        expect(binding.obj['roleRef']).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: shipped.role });
        expect(binding.obj['subjects']).to.deep.equal([SA]);
      });
    }

    it('the driver\'s roles are all listed in api-rights.ts, and no other binding names the driver', () => {
      const driverBound = MANIFESTS.filter((m) => m.obj['kind'] === 'ClusterRoleBinding' || m.obj['kind'] === 'RoleBinding')
        .filter((m) => (m.obj['subjects'] as Obj[] | undefined)?.some((s) => s['kind'] === 'ServiceAccount' && s['name'] === SA.name));
      expect(driverBound.map((m) => m.obj['roleRef'].name).sort()).to.deep.equal(SHIPPED_ROLES.map((r) => r.role).sort());
    });

    it('Secrets are granted only by the sync and rotation reconciler roles', () => {
      const withSecrets = roles().filter((m) => grants(m.obj).some((k) => / \/(secrets|\*)$/.test(k) || k.includes(' */')));
      expect(withSecrets.map((m) => m.file).sort()).to.deep.equal(['rbac-rotation.yaml', 'rbac-secret-sync.yaml']);
    });

    it('the default kustomization grants what the DaemonSet\'s flags need: no workload restarts, the rest as upstream\'s aggregated roles', () => {
      const config = parseDriverConfig(expandArgs(container(DRIVER_DS(), 'secrets-store'), { KUBE_NODE_NAME: 'n' }), {});
      const applied = SHIPPED_ROLES.filter((r) => kustomized().includes(r.file.replace(/^deploy\//, '')));
      expect(applied.map((r) => r.feature)).to.deep.equal(featuresOf(config));
      expect(kustomized()).to.not.include('rbac-workload-restart.yaml');
      expect(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')).to.match(/^\s*#\s*- rbac-workload-restart\.yaml$/m);
      const granted = applied.flatMap((r) => r.rights);
      const needed = featuresOf(config).flatMap((f) => FEATURE_CALLS[f]);
      for (const right of needed) expect(granted.some((g) => covers(g, right)), `${rightKey(right)} is granted`).to.equal(true);
      const extra = granted.filter((g) => !needed.some((n) => covers(g, n) && covers(n, g)));
      expect(extra.map(rightKey).sort(), 'granted beyond the calls, each with a reason').to.deep.equal(
        GRANTED_BEYOND_CALLS.map((x) => rightKey(x.right)).filter((k) => extra.map(rightKey).includes(k)).sort());
    });

    it('ships upstream\'s aggregated roles for namespace users, with upstream\'s names and labels', () => {
      const aggregated: Record<string, { file: string; labels: string[]; rights: string[] }> = {
        'secretproviderclasses-admin-role': { file: 'role-secretproviderclasses-admin.yaml', labels: ['aggregate-to-admin', 'aggregate-to-edit'],
          rights: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'].map((v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasses`) },
        'secretproviderclasses-viewer-role': { file: 'role-secretproviderclasses-viewer.yaml', labels: ['aggregate-to-view'],
          rights: ['get', 'list', 'watch'].map((v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasses`) },
        'secretproviderclasspodstatuses-viewer-role': { file: 'role-secretproviderclasspodstatuses-viewer.yaml', labels: ['aggregate-to-view'],
          rights: ['get', 'list', 'watch'].map((v) => `${v} secrets-store.csi.x-k8s.io/secretproviderclasspodstatuses`) },
      };
      for (const [name, want] of Object.entries(aggregated)) {
        const role = find('ClusterRole', name);
        expect(role.file, name).to.equal(want.file);
        expect(kustomized(), name).to.include(want.file);
        const labels = Object.entries(role.obj['metadata'].labels as Record<string, string>).filter(([k]) => k.startsWith('rbac.authorization.k8s.io/')).map(([k, v]) => `${k.split('/')[1]}=${v}`);
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
        const matches = objects.filter((o) => o['kind'] === target?.['kind'] && o['metadata']?.name === target?.['name']);
        expect(matches, JSON.stringify(target)).to.have.lengthOf(1);
        for (const op of doc) {
          const parts = String(op['path']).split('/').slice(1);
          const last = parts.pop() as string;
          let at: any = matches[0];
          for (const p of parts) { at = at[p]; expect(at, `${op['path']} resolves`).to.not.equal(undefined); }
          if (op['op'] === 'test') expect(at[last]).to.deep.equal(op['value']);
          else if (op['op'] === 'replace') { expect(at, `${op['path']} exists`).to.have.property(last); at[last] = op['value']; }
          else if (op['op'] === 'add' && last === '-') (at as unknown[]).push(op['value']);
          else expect.fail(`unsupported op ${op['op']} ${op['path']}`);
        }
      }
      return objects;
    }

    it('sets requiresRepublish, runs the driver in republish mode and leaves out the reconciler\'s role', () => {
      const objects = applyOverlay();
      expect(objects.find((o) => o['kind'] === 'CSIDriver')?.['spec'].requiresRepublish).to.equal(true);
      const ds = objects.find((o) => o['kind'] === 'DaemonSet' && o['metadata'].name === 'csi-secrets-store') as Obj;
      const config = parseDriverConfig(expandArgs(container(ds, 'secrets-store'), { KUBE_NODE_NAME: 'n' }), {});
      expect([config.enableSecretRotation, config.rotationMode]).to.deep.equal([true, 'republish']);
      const roles = objects.filter((o) => o['kind'] === 'ClusterRole').map((o) => o['metadata'].name as string);
      const driverRoles = SHIPPED_ROLES.filter((r) => roles.includes(r.role));
      const granted = driverRoles.flatMap((r) => r.rights);
      for (const right of featuresOf(config).flatMap((f) => FEATURE_CALLS[f])) expect(granted.some((g) => covers(g, right)), rightKey(right)).to.equal(true);
      expect(driverRoles.map((r) => r.file)).to.deep.equal(['deploy/rbac.yaml', 'deploy/rbac-secret-sync.yaml']);
      expect(granted.filter((g) => g.resource === 'serviceaccounts/token')).to.deep.equal([]);
    });
  });

  describe('driver DaemonSet', () => {
    it('runs the driver privileged, with the node name from the downward API', () => {
      const ds = DRIVER_DS();
      expect(ds['metadata'].namespace).to.equal('kube-system');
      const c = container(ds, 'secrets-store');
      expect(c['securityContext']?.privileged).to.equal(true);
      const nodeName = (c['env'] as Obj[]).find((e) => e['name'] === 'KUBE_NODE_NAME');
      expect(nodeName?.['valueFrom']?.fieldRef?.fieldPath).to.equal('spec.nodeName');
      expect(c['image']).to.match(/^secrets-store-csi\/driver:/);
      expect(c['resources']?.requests).to.be.an('object');
      expect(c['resources']?.limits).to.be.an('object');
    });

    it('mounts /var/lib/kubelet/pods at the same path with Bidirectional propagation', () => {
      const ds = DRIVER_DS();
      const c = container(ds, 'secrets-store');
      const mount = (c['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === '/var/lib/kubelet/pods');
      expect(mount?.['mountPropagation']).to.equal('Bidirectional');
      expect(hostPathOf(ds, c, '/var/lib/kubelet/pods')).to.equal('/var/lib/kubelet/pods');
      // Bidirectional only where it is needed.
      const others = (c['volumeMounts'] as Obj[]).filter((m) => m !== mount && m['mountPropagation'] === 'Bidirectional');
      expect(others).to.deep.equal([]);
    });

    it('passes only flags the driver knows (none of the ignored upstream ones), and they parse', () => {
      const c = container(DRIVER_DS(), 'secrets-store');
      const args = expandArgs(c, { KUBE_NODE_NAME: 'node-1' });
      for (const arg of args) {
        const name = /^--?([^=]+)/.exec(arg)?.[1];
        expect(name, `${arg} is a --flag=value argument`).to.be.a('string');
        expect(DRIVER_FLAGS, arg).to.have.property(name as string);
        expect(DRIVER_FLAGS[name as string]?.ignored, `${arg} is an ignored upstream flag`).to.not.equal(true);
      }
      const config = parseDriverConfig(args, {});
      expect(config.nodeId).to.equal('node-1');
      expect(config.socketPath).to.equal('/csi/csi.sock');
      expect(config.spcDir, 'Kubernetes mode, not local mode').to.equal('');
      expect(config.mountMode).to.equal('tmpfs');
      expect(config.ignoredFlags).to.deep.equal([]);
    });

    it('enables Secret sync, and the kustomization applies the sync role it needs', () => {
      const c = container(DRIVER_DS(), 'secrets-store');
      expect(parseDriverConfig(expandArgs(c, { KUBE_NODE_NAME: 'n' }), {}).enableSecretSync).to.equal(true);
      const kustomization = parseFile(join(DEPLOY, 'kustomization.yaml'))[0] as Obj;
      expect(kustomization['resources']).to.include('rbac-secret-sync.yaml');
    });

    it('serves the CSI socket where node-driver-registrar and the liveness probe look for it', () => {
      const ds = DRIVER_DS();
      const driver = container(ds, 'secrets-store');
      const socket = parseDriverConfig(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), {}).socketPath;
      const hostSocket = hostPathOf(ds, driver, socket);
      const registrar = container(ds, 'node-driver-registrar');
      expect(registrar['args']).to.include(`--kubelet-registration-path=${hostSocket}`);
      const csiAddress = (registrar['args'] as string[]).find((a) => a.startsWith('--csi-address='))?.split('=')[1] as string;
      expect(hostPathOf(ds, registrar, csiAddress)).to.equal(hostSocket);
      expect(hostPathOf(ds, registrar, '/registration')).to.equal('/var/lib/kubelet/plugins_registry');
      const probe = container(ds, 'liveness-probe');
      const probeAddress = (probe['args'] as string[]).find((a) => a.startsWith('--csi-address='))?.split('=')[1] as string;
      expect(hostPathOf(ds, probe, probeAddress)).to.equal(hostSocket);
    });

    it('mounts every provider directory it searches from the host, at the same path', () => {
      const ds = DRIVER_DS();
      const c = container(ds, 'secrets-store');
      const config = parseDriverConfig(expandArgs(c, { KUBE_NODE_NAME: 'n' }), {});
      expect(config.providerDirs).to.deep.equal(['/etc/kubernetes/secrets-store-csi-providers', '/var/run/secrets-store-csi-providers']);
      for (const dir of config.providerDirs) expect(hostPathOf(ds, c, dir)).to.equal(dir);
    });

    it('has liveness and readiness probes that point at ports the pod declares', () => {
      const ds = DRIVER_DS();
      const c = container(ds, 'secrets-store');
      const ports = new Map((c['ports'] as Obj[]).map((p) => [p['name'], p['containerPort']]));
      expect(c['livenessProbe']?.httpGet?.path).to.equal('/healthz');
      expect(c['readinessProbe']?.httpGet?.path).to.equal('/healthz');
      expect(ports.get(c['livenessProbe'].httpGet.port)).to.equal(9808);
      expect(container(ds, 'liveness-probe')['args']).to.include('--http-endpoint=0.0.0.0:9808');
      const metricsPort = Number(parseDriverConfig(expandArgs(c, { KUBE_NODE_NAME: 'n' }), {}).metricsAddr.split(':').pop());
      expect(ports.get(c['readinessProbe'].httpGet.port)).to.equal(metricsPort);
    });
  });

  describe('file provider DaemonSet', () => {
    const providerArgs = () => {
      const c = container(PROVIDER_DS(), 'provider');
      const [name, ...rest] = c['args'] as string[];
      expect(name).to.equal(fileProviderDefinition.name);
      return parseFlags(rest, { ...commonProviderFlags('file'), ...fileProviderDefinition.flags });
    };

    it('passes only flags the file provider knows', () => {
      const flags = providerArgs();
      expect(flags.positionals).to.deep.equal([]);
      expect(stringFlag(flags, 'root')).to.equal('/var/lib/secrets-store-csi-file-provider');
      expect(stringFlag(flags, 'hmac-key-file')).to.equal('/var/lib/secrets-store-csi-file-provider-state/hmac.key');
      expect(stringFlag(flags, 'health-addr')).to.equal(':8989');
    });

    it('creates its socket <provider>.sock in the host directory the driver mounts at --provider-volume', () => {
      const provider = PROVIDER_DS();
      const socket = socketPathFromEndpoint(stringFlag(providerArgs(), 'endpoint'));
      expect(basename(socket)).to.equal(`${fileProviderDefinition.name}.sock`);
      const hostSocketDir = dirname(hostPathOf(provider, container(provider, 'provider'), socket));

      const driverDs = DRIVER_DS();
      const driver = container(driverDs, 'secrets-store');
      const providerVolume = stringFlag(parseFlags(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), DRIVER_FLAGS), 'provider-volume');
      expect(hostPathOf(driverDs, driver, providerVolume)).to.equal(hostSocketDir);
    });

    it('reads its root and keeps its key in host directories', () => {
      const ds = PROVIDER_DS();
      const c = container(ds, 'provider');
      const flags = providerArgs();
      const root = stringFlag(flags, 'root');
      expect(hostPathOf(ds, c, root)).to.equal(root);
      expect((c['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === root)?.['readOnly']).to.equal(true);
      const key = stringFlag(flags, 'hmac-key-file');
      expect(hostPathOf(ds, c, key)).to.equal(key);
    });

    it('runs unprivileged, non-root, with a read-only root filesystem', () => {
      const ds = PROVIDER_DS();
      const c = container(ds, 'provider');
      const sc = c['securityContext'] as Obj;
      expect(sc['runAsNonRoot']).to.equal(true);
      expect(sc['runAsUser']).to.equal(65532);
      expect(sc['readOnlyRootFilesystem']).to.equal(true);
      expect(sc['allowPrivilegeEscalation']).to.equal(false);
      expect(sc['privileged']).to.not.equal(true);
      expect(sc['capabilities']?.drop).to.deep.equal(['ALL']);
      expect(sc['capabilities']?.add).to.equal(undefined);
      expect(ds['spec'].template.spec.automountServiceAccountToken).to.equal(false);
      expect(c['image']).to.match(/^secrets-store-csi\/provider:/);
    });

    it('prepares the socket directory for uid 65532 with a root init container holding only CHOWN and FOWNER', () => {
      const ds = PROVIDER_DS();
      const init = container(ds, 'prepare-host-dirs', true);
      expect(init['securityContext']?.capabilities).to.deep.equal({ drop: ['ALL'], add: ['CHOWN', 'FOWNER'] });
      expect(init['securityContext']?.privileged).to.not.equal(true);
      const script = (init['command'] as string[]).join(' ');
      expect(script).to.match(/chmod 1775 \/provider/);
      expect(hostPathOf(ds, init, '/provider')).to.equal('/var/run/secrets-store-csi-providers');
      expect(hostPathOf(ds, init, '/state')).to.equal('/var/lib/secrets-store-csi-file-provider-state');
    });

    it('has liveness and readiness on /healthz of --health-addr', () => {
      const c = container(PROVIDER_DS(), 'provider');
      const port = Number(stringFlag(providerArgs(), 'health-addr').split(':').pop());
      const ports = new Map((c['ports'] as Obj[]).map((p) => [p['name'], p['containerPort']]));
      for (const probe of ['livenessProbe', 'readinessProbe']) {
        expect(c[probe]?.httpGet?.path, probe).to.equal('/healthz');
        expect(ports.get(c[probe].httpGet.port), probe).to.equal(port);
      }
    });
  });

  describe('examples', () => {
    it('the SecretProviderClass is valid for the driver and the file provider, and secretObjects name mounted files', () => {
      const spc = parseSecretProviderClass(find('SecretProviderClass', 'demo-secrets').obj);
      expect(spc.provider).to.equal(fileProviderDefinition.name);
      const objectNames = parseFileObjects(spc.parameters).map((o) => o.objectName);
      expect(spc.secretObjects.length).to.be.greaterThan(0);
      for (const so of spc.secretObjects) for (const d of so.data) expect(objectNames).to.include(d.objectName);
    });

    it('the pod mounts that class through a read-only inline CSI volume of our driver', () => {
      const pod = find('Pod', 'secrets-demo').obj;
      const spc = find('SecretProviderClass', 'demo-secrets').obj;
      expect(pod['metadata'].namespace).to.equal(spc['metadata'].namespace);
      const volume = (pod['spec'].volumes as Obj[]).find((v) => v['csi']);
      expect(volume?.['csi']).to.deep.include({ driver: CSI_DRIVER_NAME, readOnly: true });
      expect(volume?.['csi'].volumeAttributes).to.deep.equal({ secretProviderClass: 'demo-secrets' });
      const mount = (pod['spec'].containers[0].volumeMounts as Obj[]).find((m) => m['name'] === volume?.['name']);
      expect(mount?.['readOnly']).to.equal(true);
    });
  });
});

// ---- Dockerfiles ----------------------------------------------------------------------

interface Instruction { stage: string; op: string; args: string }

/** Instructions with their stage name (continuation lines joined, comments dropped). */
function parseDockerfile(path: string): Instruction[] {
  const text = readFileSync(path, 'utf8').replace(/\\\r?\n/g, ' ');
  const out: Instruction[] = [];
  let stage = '';
  let n = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] as string).toUpperCase();
    const args = (m[2] as string).trim();
    if (op === 'FROM') {
      stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${n}`;
      n++;
    }
    out.push({ stage, op, args });
  }
  return out;
}

/** Sources and --from of a COPY (shell form). */
function copySources(args: string): { from: string | undefined; sources: string[] } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((w) => !w.startsWith('--'));
  return { from, sources: paths.slice(0, -1) };
}

/** .dockerignore patterns (Go filepath.Match per path element; ** for any depth). */
function dockerIgnored(path: string, patterns: readonly string[]): boolean {
  const clean = path.replace(/^\.?\//, '').replace(/\/$/, '');
  const parts = clean.split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\//, '').replace(/\/$/, '');
    const re = new RegExp(`^${pattern.split('/').map((seg) => (seg === '**' ? '.*' : seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]'))).join('/').replace(/\.\*\//g, '(?:.*/)?')}$`);
    if (candidates.some((c) => re.test(c))) ignored = !negate;
  }
  return ignored;
}

const DOCKERIGNORE = readFileSync(join(REPO, '.dockerignore'), 'utf8').split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
/** Produced inside the builder by `npm ci` / `npm run build`, never in the build context. */
const BUILT = ['dist', 'build', 'node_modules'];

/** The Node.js version .ci/install-node pins for CI: the images must use the same. */
const CI_NODE_VERSION = /^NODE_VERSION=(\S+)$/m.exec(readFileSync(join(REPO, '.ci/install-node'), 'utf8'))?.[1] ?? 'missing';

describe('deploy Dockerfiles (static: no Docker engine here)', () => {
  it('CI and the images pin an exact Node.js 24 LTS version (Node 20 is past end of life)', () => {
    expect(CI_NODE_VERSION).to.match(/^24\.\d+\.\d+$/);
  });

  it('.dockerignore keeps local builds and dependencies out of the context', () => {
    for (const p of ['node_modules', 'dist', 'build', '.git', 'driver/node_modules']) expect(dockerIgnored(p, DOCKERIGNORE), p).to.equal(true);
    for (const p of ['package.json', 'driver/config.ts', 'proto/csi/csi.proto']) expect(dockerIgnored(p, DOCKERIGNORE), p).to.equal(false);
  });

  for (const [file, command, user] of [['Dockerfile.driver', 'driver', undefined], ['Dockerfile.provider', 'provider', '65532:65532']] as const) {
    describe(file, () => {
      const instructions = parseDockerfile(join(REPO, file));

      it('copies from the context only paths that exist and are not in .dockerignore', () => {
        const copies = instructions.filter((i) => i.op === 'COPY' || i.op === 'ADD');
        expect(copies.length).to.be.greaterThan(0);
        for (const i of copies) {
          expect(i.op, 'COPY, not ADD').to.equal('COPY');
          const { from, sources } = copySources(i.args);
          if (from !== undefined) continue;
          for (const s of sources) {
            expect(existsSync(join(REPO, s)), `${file}: COPY ${s} exists in the repo`).to.equal(true);
            expect(dockerIgnored(s, DOCKERIGNORE), `${file}: COPY ${s} is excluded by .dockerignore`).to.equal(false);
          }
        }
      });

      it('copies from the builder only what the repo holds or the build produces', () => {
        const stages = new Set(instructions.map((i) => i.stage));
        for (const i of instructions.filter((x) => x.op === 'COPY')) {
          const { from, sources } = copySources(i.args);
          if (from === undefined) continue;
          expect(stages, `--from=${from} names a stage`).to.include(from);
          for (const s of sources) {
            expect(s.startsWith('/app/'), `${s} is under the builder's WORKDIR /app`).to.equal(true);
            const rel = s.slice('/app/'.length).replace(/\/$/, '');
            const produced = BUILT.some((b) => rel === b || rel.startsWith(`${b}/`));
            expect(produced || existsSync(join(REPO, rel)), `${file}: COPY --from=${from} ${s}`).to.equal(true);
          }
        }
      });

      it('builds with the sources tsc and node-gyp read', () => {
        const copied = instructions.filter((i) => i.stage === 'builder' && i.op === 'COPY')
          .flatMap((i) => copySources(i.args).sources.map((s) => s.replace(/\/$/, '')));
        const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { include: string[] };
        const roots = [...new Set(tsconfig.include.map((p) => p.split('/')[0] as string))].filter((r) => r !== 'test' && r !== 'bench');
        for (const r of [...roots, 'package.json', 'package-lock.json', 'tsconfig.json', 'binding.gyp', 'scripts/build-native.mjs', 'native']) {
          expect(copied, `${file}: the builder copies ${r}`).to.include(r);
        }
        const runs = instructions.filter((i) => i.stage === 'builder' && i.op === 'RUN').map((i) => i.args).join(' && ');
        expect(runs).to.match(/npm ci\b/);
        expect(runs).to.match(/npm run build\b/);
        expect(runs).to.match(/npm prune --omit=dev\b/);
      });

      it(`runs \`node ${NODE_FLAGS.join(' ')} /app/dist/bin/cli.js ${command}\` from node:${CI_NODE_VERSION}-bookworm-slim, the Node.js CI runs on`, () => {
        const froms = instructions.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]);
        expect(froms).to.deep.equal([`node:${CI_NODE_VERSION}-bookworm`, `node:${CI_NODE_VERSION}-bookworm-slim`]);
        const entrypoint = instructions.filter((i) => i.op === 'ENTRYPOINT').pop();
        expect(JSON.parse(entrypoint?.args ?? 'null')).to.deep.equal(['node', ...NODE_FLAGS, '/app/dist/bin/cli.js', command]);
        expect(existsSync(join(REPO, 'bin/cli.ts'))).to.equal(true);
        const lastUser = instructions.filter((i) => i.op === 'USER' && i.stage !== 'builder').pop()?.args;
        if (user === undefined) expect(lastUser === undefined || /^(0|root)(:0|:root)?$/.test(lastUser), 'the driver runs as root').to.equal(true);
        else expect(lastUser).to.equal(user);
      });
    });
  }

  it('the driver image carries the .proto files and the mount addon where the code loads them', () => {
    const runtime = parseDockerfile(join(REPO, 'Dockerfile.driver')).filter((i) => i.stage !== 'builder' && i.op === 'COPY')
      .flatMap((i) => copySources(i.args).sources.map((s) => s.replace(/\/$/, '')));
    for (const p of ['/app/dist', '/app/node_modules', '/app/package.json', '/app/proto/csi', '/app/proto/provider']) expect(runtime).to.include(p);
    expect(runtime.some((s) => s.startsWith('/app/build/Release'))).to.equal(true);
  });
});
