import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { DRIVER_FLAGS, parseDriverConfig } from '../../driver/config.js';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { parseFlags, stringFlag } from '../../lib/flags.js';
import { socketPathFromEndpoint } from '../../lib/grpc/unix-socket.js';
import { parseFileObjects } from '../../providers/file/config.js';
import { fileProviderDefinition } from '../../providers/file/main.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { parse } from 'yaml';
import { parseVaultParameters } from '../../providers/vault/parameters.js';
import {
  container,
  CSI_DRIVER_NAME,
  csiDriverTextForVault,
  DEPLOY,
  DRIVER_DS,
  expandArgs,
  FILES,
  find,
  hostPathOf,
  MANIFESTS,
  OPT_IN,
  parseFile,
  PROVIDER_DS,
  VAULT_PROVIDER_DS,
  type Obj,
} from '../support/deploy-manifests.js';
import { checkVaultProviderDaemonSet, VAULT_PROVIDER_NAME } from '../support/vault-provider-daemonset.js';

// Static checks of deploy/ (no cluster here): the facts a broken manifest would get wrong,
// against the code's own tables. RBAC: deploy-rbac.test.ts; Dockerfiles: dockerfiles.test.ts.

describe('deploy manifests', () => {
  it('every deploy/**/*.yaml parses, and every object has apiVersion, kind and a name', () => {
    expect(FILES.length).to.be.greaterThan(8);
    for (const { file, obj } of MANIFESTS) {
      expect(obj['apiVersion'], file).to.be.a('string');
      expect(obj['kind'], file).to.be.a('string');
      if (obj['kind'] !== 'Kustomization') expect(obj['metadata']?.name, file).to.be.a('string');
    }
  });

  it('kustomization.yaml lists every manifest that exists, and all of them except examples, opt-ins and the sync controller', () => {
    const kustomization = parseFile(join(DEPLOY, 'kustomization.yaml'))[0] as Obj;
    const resources = kustomization['resources'] as string[];
    for (const r of resources) expect(existsSync(join(DEPLOY, r)), `deploy/${r}`).to.equal(true);
    const expected = FILES.map((f) => relative(DEPLOY, f)).filter(
      // deploy/sync-controller/ is its own kustomization (docs/secret-sync-controller.md).
      (f) =>
        f !== 'kustomization.yaml' &&
        !f.startsWith('examples/') &&
        !f.startsWith('sync-controller/') &&
        !OPT_IN.includes(f),
    );
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
      const others = (c['volumeMounts'] as Obj[]).filter(
        (m) => m !== mount && m['mountPropagation'] === 'Bidirectional',
      );
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
      const csiAddress = (registrar['args'] as string[])
        .find((a) => a.startsWith('--csi-address='))
        ?.split('=')[1] as string;
      expect(hostPathOf(ds, registrar, csiAddress)).to.equal(hostSocket);
      expect(hostPathOf(ds, registrar, '/registration')).to.equal('/var/lib/kubelet/plugins_registry');
      const probe = container(ds, 'liveness-probe');
      const probeAddress = (probe['args'] as string[])
        .find((a) => a.startsWith('--csi-address='))
        ?.split('=')[1] as string;
      expect(hostPathOf(ds, probe, probeAddress)).to.equal(hostSocket);
    });

    it('mounts every provider directory it searches from the host, at the same path', () => {
      const ds = DRIVER_DS();
      const c = container(ds, 'secrets-store');
      const config = parseDriverConfig(expandArgs(c, { KUBE_NODE_NAME: 'n' }), {});
      expect(config.providerDirs).to.deep.equal([
        '/etc/kubernetes/secrets-store-csi-providers',
        '/var/run/secrets-store-csi-providers',
      ]);
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
      const metricsPort = Number(
        parseDriverConfig(expandArgs(c, { KUBE_NODE_NAME: 'n' }), {})
          .metricsAddr.split(':')
          .pop(),
      );
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
      const providerVolume = stringFlag(
        parseFlags(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), DRIVER_FLAGS),
        'provider-volume',
      );
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

  describe('vault provider DaemonSet (opt-in)', () => {
    it('is listed commented in kustomization.yaml, next to the commented tokenRequests it needs', () => {
      expect(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')).to.match(
        /^ {2}# - provider-vault-daemonset\.yaml$/m,
      );
    });

    it('passes flags the vault provider accepts, serves vault.sock where the driver looks, reads the HMAC key from the Secret vault-provider-hmac-key', () => {
      checkVaultProviderDaemonSet(VAULT_PROVIDER_DS(), DRIVER_DS(), {
        vaultAddress: 'https://vault.vault.svc:8200',
        authMount: 'kubernetes',
        hmacSecret: { name: 'vault-provider-hmac-key', key: 'key' },
      });
    });

    it('documents the command that creates the HMAC key Secret it mounts', () => {
      const text = readFileSync(join(DEPLOY, 'provider-vault-daemonset.yaml'), 'utf8');
      expect(text).to.include('kubectl -n kube-system create secret generic vault-provider-hmac-key');
      expect(text).to.include('--from-file=key=<(head -c 32 /dev/urandom)');
    });

    it("csidriver.yaml's commented tokenRequests, uncommented, request the audience vault classes log in with", () => {
      const spec = (parse(csiDriverTextForVault()) as Obj)['spec'] as Obj;
      const defaultAudience = parseVaultParameters({
        roleName: 'r',
        objects: '- {objectName: a, secretPath: secret/a}',
      }).audience;
      expect(spec['tokenRequests']).to.deep.equal([{ audience: defaultAudience, expirationSeconds: 600 }]);
      expect(spec['serviceAccountTokenInSecrets']).to.equal(true);
      // The rest of the object is deploy/'s.
      const { tokenRequests: _t, serviceAccountTokenInSecrets: _s, ...rest } = spec;
      expect(rest).to.deep.equal(find('CSIDriver', CSI_DRIVER_NAME).obj['spec']);
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

    for (const name of ['vault-demo', 'openbao-demo']) {
      it(`the vault class ${name} is valid for the driver and the vault provider, and its secretObjects name mounted files`, () => {
        const spc = parseSecretProviderClass(find('SecretProviderClass', name).obj);
        expect(spc.provider).to.equal(VAULT_PROVIDER_NAME);
        const params = parseVaultParameters(spc.parameters);
        expect(params.roleName).to.equal('vault-demo');
        expect(
          params.objects.some((o) => o.secretKey !== undefined),
          'a secretKey pick',
        ).to.equal(true);
        expect(spc.secretObjects.length).to.be.greaterThan(0);
        for (const so of spc.secretObjects)
          for (const d of so.data) expect(params.objects.map((o) => o.objectName)).to.include(d.objectName);
      });
    }

    it('the vault example pod runs as the service account the README binds, mounting vault-demo read-only', () => {
      const pod = find('Pod', 'vault-demo').obj;
      const account = find('ServiceAccount', 'vault-demo').obj;
      expect(pod['spec'].serviceAccountName).to.equal(account['metadata'].name);
      expect(pod['metadata'].namespace).to.equal(account['metadata'].namespace);
      const readme = readFileSync(join(DEPLOY, 'examples/vault/README.md'), 'utf8');
      expect(readme).to.include(`bound_service_account_names=${account['metadata'].name}`);
      expect(readme).to.include(`bound_service_account_namespaces=${account['metadata'].namespace}`);
      expect(readme).to.include(
        `"bound_subject": "system:serviceaccount:${account['metadata'].namespace}:${account['metadata'].name}"`,
      );
      const volume = (pod['spec'].volumes as Obj[]).find((v) => v['csi']);
      expect(volume?.['csi']).to.deep.include({ driver: CSI_DRIVER_NAME, readOnly: true });
      expect(volume?.['csi'].volumeAttributes).to.deep.equal({ secretProviderClass: 'vault-demo' });
      expect(find('SecretProviderClass', 'vault-demo').obj['metadata'].namespace).to.equal(pod['metadata'].namespace);
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
