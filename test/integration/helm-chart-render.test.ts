import { expect } from 'chai';
import { basename, posix } from 'node:path';
import { DRIVER_FLAGS, parseDriverConfig } from '../../driver/config.js';
import { parseFlags, stringFlag } from '../../lib/flags.js';
import { socketPathFromEndpoint } from '../../lib/grpc/unix-socket.js';
import { fileProviderDefinition } from '../../providers/file/main.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { AGGREGATED_ROLES, CHART_VALUE_SETS } from '../support/helm-value-sets.js';
import {
  CHART_DIR,
  RENDER_KUBE_VERSION,
  createHelm,
  expandArgs,
  findManifest,
  podContainer,
  type Helm,
  type Manifest,
} from '../support/helm.js';
import { hostPathOf, type Obj } from '../support/deploy-manifests.js';
import { checkAzureProviderDaemonSet } from '../support/azure-provider-daemonset.js';
import { checkVaultProviderDaemonSet } from '../support/vault-provider-daemonset.js';
import { checkExecProviderDaemonSet } from '../support/exec-provider-daemonset.js';
import { checkPkiProviderDaemonSet } from '../support/pki-provider-daemonset.js';

// The chart rendered by the real helm (test/peers/install.sh helm) for each value set, read
// with the driver's and the file provider's own flag parsers.

const NAMESPACE = 'secrets-store';
const DRIVER_DS = 'csi-secrets-store-secrets-store-csi-driver';
const PROVIDER_DS = `${DRIVER_DS}-provider-file`;
const VAULT_DS = `${DRIVER_DS}-provider-vault`;
const AZURE_DS = `${DRIVER_DS}-provider-azure`;
const EXEC_DS = `${DRIVER_DS}-provider-exec`;
const PKI_DS = `${DRIVER_DS}-provider-pki`;
const SERVICE_ACCOUNT = 'secrets-store-csi-driver';

describe('Helm chart: lint and render (real helm)', function () {
  this.timeout(120_000);
  let helm: Helm;

  before(() => {
    helm = createHelm();
  });
  after(() => helm?.cleanup());

  it('helm lint --strict passes with the defaults and with every value set', async () => {
    await helm.run(['lint', '--strict', '--kube-version', RENDER_KUBE_VERSION, CHART_DIR]);
    for (const set of CHART_VALUE_SETS) {
      await helm
        .run(['lint', '--strict', '--kube-version', RENDER_KUBE_VERSION, CHART_DIR, '-f', helm.valuesFile(set.values)])
        .catch((err: Error) => {
          throw new Error(`${set.name}: ${err.message}`);
        });
    }
  });

  for (const set of CHART_VALUE_SETS) {
    describe(set.name, () => {
      const want = set.expect;
      let objects: Manifest[];
      before(async () => {
        objects = await helm.template(set.values, { namespace: NAMESPACE });
      });

      it('passes the driver only flags it accepts (none ignored), and they parse to what the values ask', () => {
        const c = podContainer(findManifest(objects, 'DaemonSet', DRIVER_DS), 'secrets-store');
        expect(c['image']).to.equal(want.driverImage);
        const args = expandArgs(c, { KUBE_NODE_NAME: 'node-1' });
        for (const arg of args) {
          const name = /^--?([^=]+)/.exec(arg)?.[1] ?? '';
          expect(DRIVER_FLAGS, `${arg} is a flag of our driver`).to.have.property(name);
          expect(DRIVER_FLAGS[name]?.ignored, `${arg} is an ignored upstream flag`).to.not.equal(true);
        }
        const config = parseDriverConfig(args, {});
        expect(config.ignoredFlags).to.deep.equal([]);
        expect(config.nodeId).to.equal('node-1');
        expect(config.socketPath).to.equal('/csi/csi.sock');
        expect(config.enableSecretSync, 'enable-secret-sync').to.equal(want.sync);
        expect(config.enableSecretRotation, 'enable-secret-rotation').to.equal(want.rotation);
        if (want.rotation) expect(config.rotationPollIntervalMs).to.equal(want.rotationPollIntervalMs);
        // auto is the driver's default: no flag, the driver picks the mode by its rights.
        expect(
          args.filter((a) => a.startsWith('--rotation-mode')),
          'rotation-mode',
        ).to.deep.equal(want.rotation && want.rotationMode !== 'auto' ? [`--rotation-mode=${want.rotationMode}`] : []);
        expect(config.rotationMode).to.equal(want.rotation ? want.rotationMode : 'auto');
        expect(config.providerDirs).to.deep.equal(want.providerDirs);
        expect(config.logLevel).to.equal(want.logLevel);
        expect(config.maxCallRecvMsgSize).to.equal(want.maxCallRecvMsgSize);
        expect(config.spcDir, 'Kubernetes mode').to.equal('');
      });

      it('renders the CSIDriver with requiresRepublish with rotation unless in reconciler mode, and the tokenRequests asked for', () => {
        const spec = findManifest(objects, 'CSIDriver', 'secrets-store.csi.k8s.io')['spec'];
        expect(spec).to.deep.include({
          podInfoOnMount: true,
          attachRequired: false,
          volumeLifecycleModes: ['Ephemeral'],
        });
        expect(spec.fsGroupPolicy).to.equal(want.fsGroupPolicy);
        expect(spec.requiresRepublish).to.equal(want.rotation && want.rotationMode !== 'reconciler');
        expect(((spec.tokenRequests ?? []) as { audience: string }[]).map((t) => t.audience)).to.deep.equal(
          want.tokenAudiences,
        );
        // Kubernetes 1.35+: tokens in the request's secrets, as upstream's chart sets it.
        expect(spec.serviceAccountTokenInSecrets).to.equal(want.tokenAudiences.length > 0 ? true : undefined);
      });

      it('renders the ClusterRoles the features need, each bound to the driver ServiceAccount in the release namespace', () => {
        const rbacInstall = want.clusterRoles.includes('secretproviderclasses-role');
        const roles = objects
          .filter((o) => o.kind === 'ClusterRole')
          .map((o) => o.metadata?.name ?? '')
          .sort();
        expect(roles).to.deep.equal([...want.clusterRoles, ...(rbacInstall ? AGGREGATED_ROLES : [])].sort());
        const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding');
        expect(bindings.map((b) => b['roleRef'].name).sort()).to.deep.equal(want.clusterRoles);
        for (const b of bindings)
          expect(b['subjects'], b.metadata?.name).to.deep.equal([
            { kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: NAMESPACE },
          ]);
        const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
        expect(accounts.map((a) => `${a.metadata?.namespace}/${a.metadata?.name}`)).to.deep.equal(
          rbacInstall ? [`${NAMESPACE}/${SERVICE_ACCOUNT}`] : [],
        );
        expect(findManifest(objects, 'DaemonSet', DRIVER_DS)['spec'].template.spec.serviceAccountName).to.equal(
          SERVICE_ACCOUNT,
        );
      });

      it(want.crds ? 'renders both CRDs, kept on uninstall' : 'renders no CRDs', () => {
        const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
        expect(crds.map((c) => c.metadata?.name).sort()).to.deep.equal(
          want.crds
            ? [
                'secretproviderclasses.secrets-store.csi.x-k8s.io',
                'secretproviderclasspodstatuses.secrets-store.csi.x-k8s.io',
              ]
            : [],
        );
        for (const crd of crds) expect(crd.metadata?.annotations?.['helm.sh/resource-policy']).to.equal('keep');
      });

      it("puts kubelet's paths under kubeletRootDir, and the registrar registers the socket the driver serves", () => {
        const ds = findManifest(objects, 'DaemonSet', DRIVER_DS);
        const driver = podContainer(ds, 'secrets-store');
        const root = want.kubeletRootDir;
        const mount = (driver['volumeMounts'] as Obj[]).find((m) => m['mountPropagation'] === 'Bidirectional');
        expect(mount?.['mountPath']).to.equal(`${root}/pods`);
        expect(hostPathOf(ds, driver, `${root}/pods`)).to.equal(`${root}/pods`);
        const socket = hostPathOf(
          ds,
          driver,
          parseDriverConfig(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), {}).socketPath,
        );
        expect(socket).to.equal(`${root}/plugins/csi-secrets-store/csi.sock`);
        const registrar = podContainer(ds, 'node-driver-registrar');
        expect(registrar['args']).to.include(`--kubelet-registration-path=${socket}`);
        expect(hostPathOf(ds, registrar, '/registration')).to.equal(`${root}/plugins_registry`);
        for (const dir of parseDriverConfig(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), {}).providerDirs)
          expect(hostPathOf(ds, driver, dir)).to.equal(dir);
      });

      it(
        want.providerFile
          ? "runs the file provider with flags it accepts, its socket in the driver's --provider-volume"
          : 'renders no file provider',
        () => {
          const providers = objects.filter((o) => o.kind === 'DaemonSet' && o.metadata?.name === PROVIDER_DS);
          expect(providers).to.have.lengthOf(want.providerFile ? 1 : 0);
          if (!want.providerFile) return;
          const ds = providers[0] as Manifest;
          const c = podContainer(ds, 'provider');
          const [name, ...rest] = c['args'] as string[];
          expect(name).to.equal(fileProviderDefinition.name);
          const flags = parseFlags(rest, { ...commonProviderFlags('file'), ...fileProviderDefinition.flags });
          expect(flags.positionals).to.deep.equal([]);
          const socket = socketPathFromEndpoint(stringFlag(flags, 'endpoint'));
          expect(basename(socket)).to.equal('file.sock');
          const driverDs = findManifest(objects, 'DaemonSet', DRIVER_DS);
          const driver = podContainer(driverDs, 'secrets-store');
          const providerVolume = stringFlag(
            parseFlags(expandArgs(driver, { KUBE_NODE_NAME: 'n' }), DRIVER_FLAGS),
            'provider-volume',
          );
          expect(posix.dirname(hostPathOf(ds, c, socket))).to.equal(hostPathOf(driverDs, driver, providerVolume));
          expect(hostPathOf(ds, c, stringFlag(flags, 'root'))).to.equal(stringFlag(flags, 'root'));
          expect(hostPathOf(ds, c, stringFlag(flags, 'hmac-key-file'))).to.equal(stringFlag(flags, 'hmac-key-file'));
          // Its own selector: the driver DaemonSet must not adopt provider pods.
          const driverSelector = driverDs['spec'].selector.matchLabels as Record<string, string>;
          const podLabels = ds['spec'].template.metadata.labels as Record<string, string>;
          expect(Object.entries(driverSelector).every(([k, v]) => podLabels[k] === v)).to.equal(false);
        },
      );

      it(
        want.providerVault
          ? "runs the vault provider with flags it accepts, its socket in the driver's --provider-volume, its key and CA from the named objects"
          : 'renders no vault provider',
        () => {
          const providers = objects.filter((o) => o.kind === 'DaemonSet' && o.metadata?.name === VAULT_DS);
          expect(providers).to.have.lengthOf(want.providerVault ? 1 : 0);
          if (!want.providerVault) return;
          const ds = providers[0] as Manifest;
          checkVaultProviderDaemonSet(ds, findManifest(objects, 'DaemonSet', DRIVER_DS), want.providerVault);
          const c = podContainer(ds, 'provider');
          const vault = (set.values['providers'] as { vault: Obj }).vault;
          for (const arg of vault['extraArgs'] ?? []) expect(c['args']).to.include(arg);
          expect(c['env']).to.deep.equal(vault['env']);
          if (vault['image']?.digest)
            expect(c['image']).to.equal(`${vault['image'].repository}@${vault['image'].digest}`);
        },
      );

      it(
        want.providerAzure
          ? "runs the azure provider with flags it accepts, on the host network, its socket in the driver's --provider-volume"
          : 'renders no azure provider',
        () => {
          const providers = objects.filter((o) => o.kind === 'DaemonSet' && o.metadata?.name === AZURE_DS);
          expect(providers).to.have.lengthOf(want.providerAzure ? 1 : 0);
          if (!want.providerAzure) return;
          const ds = providers[0] as Manifest;
          checkAzureProviderDaemonSet(ds, findManifest(objects, 'DaemonSet', DRIVER_DS), want.providerAzure);
          const c = podContainer(ds, 'provider');
          const azure = (set.values['providers'] as { azure: Obj }).azure;
          for (const arg of azure['extraArgs'] ?? []) expect(c['args']).to.include(arg);
          expect(c['env']).to.deep.equal(azure['env']);
          for (const m of azure['volumeMounts'] ?? []) expect(c['volumeMounts']).to.deep.include(m);
          for (const v of azure['volumes'] ?? []) expect(ds['spec'].template.spec.volumes).to.deep.include(v);
          if (azure['image']?.digest)
            expect(c['image']).to.equal(`${azure['image'].repository}@${azure['image'].digest}`);
        },
      );

      it(
        want.providerExec
          ? "runs the exec provider with flags it accepts, its helpers from the values' ConfigMaps (0555) or a hostPath, its socket in the driver's --provider-volume"
          : 'renders no exec provider',
        () => {
          const providers = objects.filter((o) => o.kind === 'DaemonSet' && o.metadata?.name === EXEC_DS);
          const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
          expect(providers).to.have.lengthOf(want.providerExec ? 1 : 0);
          if (!want.providerExec) {
            expect(configMaps).to.deep.equal([]);
            return;
          }
          const ds = providers[0] as Manifest;
          checkExecProviderDaemonSet(ds, findManifest(objects, 'DaemonSet', DRIVER_DS), want.providerExec);
          const c = podContainer(ds, 'provider');
          const exec = (set.values['providers'] as { exec: Obj }).exec;
          for (const arg of exec['extraArgs'] ?? []) expect(c['args']).to.include(arg);
          expect(c['env']).to.deep.equal(exec['env']);
          for (const m of exec['volumeMounts'] ?? []) expect(c['volumeMounts']).to.deep.include(m);
          for (const v of exec['volumes'] ?? []) expect(ds['spec'].template.spec.volumes).to.deep.include(v);
          if (exec['image']?.digest) expect(c['image']).to.equal(`${exec['image'].repository}@${exec['image'].digest}`);
          if (exec['resources']) expect(c['resources']).to.deep.equal(exec['resources']);
          for (const [k, v] of Object.entries(exec['nodeSelector'] ?? {}))
            expect(ds['spec'].template.spec.nodeSelector[k]).to.equal(v);
          if (exec['tolerations']) expect(ds['spec'].template.spec.tolerations).to.deep.equal(exec['tolerations']);
          if (exec['tmpSizeLimit'])
            expect(
              ds['spec'].template.spec.volumes.find((v: { name: string }) => v.name === 'tmp').emptyDir.sizeLimit,
            ).to.equal(exec['tmpSizeLimit']);
          const helpers = want.providerExec.helpers;
          if (helpers.kind === 'hostPath') {
            expect(configMaps, 'no ConfigMap with helpers on the nodes').to.deep.equal([]);
            return;
          }
          // The helpers verbatim; each helper file under a key that is its path with / as _.
          expect(findManifest(objects, 'ConfigMap', helpers.name)['data']).to.deep.equal(exec['helpers']);
          const files = Object.entries((exec['helperFiles'] ?? {}) as Record<string, string>);
          if (helpers.filesConfigMap) {
            expect(findManifest(objects, 'ConfigMap', helpers.filesConfigMap.name)['data']).to.deep.equal(
              Object.fromEntries(files.map(([p, t]) => [p.replaceAll('/', '_'), t])),
            );
          }
          expect(configMaps.map((m) => m.metadata?.namespace)).to.deep.equal(configMaps.map(() => NAMESPACE));
          expect(configMaps).to.have.lengthOf(files.length > 0 ? 2 : 1);
        },
      );

      it(
        want.providerPki
          ? "runs the pki provider with flags it accepts, holding nothing but its socket in the driver's --provider-volume"
          : 'renders no pki provider',
        () => {
          const providers = objects.filter((o) => o.kind === 'DaemonSet' && o.metadata?.name === PKI_DS);
          expect(providers).to.have.lengthOf(want.providerPki ? 1 : 0);
          if (!want.providerPki) return;
          const ds = providers[0] as Manifest;
          checkPkiProviderDaemonSet(ds, findManifest(objects, 'DaemonSet', DRIVER_DS), want.providerPki);
          const c = podContainer(ds, 'provider');
          const pki = (set.values['providers'] as { pki: Obj }).pki;
          for (const arg of pki['extraArgs'] ?? []) expect(c['args']).to.include(arg);
          if (pki['image']?.tag) expect(c['image']).to.equal(`${pki['image'].repository}:${pki['image'].tag}`);
          if (pki['resources']) expect(c['resources']).to.deep.equal(pki['resources']);
          for (const [k, v] of Object.entries(pki['nodeSelector'] ?? {}))
            expect(ds['spec'].template.spec.nodeSelector[k]).to.equal(v);
          if (pki['priorityClassName'] === '') expect(ds['spec'].template.spec.priorityClassName).to.equal(undefined);
        },
      );
    });
  }

  describe('values the chart refuses, with a message naming the key', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        'windows.enabled=true (no Windows image)',
        { windows: { enabled: true } },
        /windows\.enabled: secrets-store-csi has no Windows image/,
      ],
      [
        'an unknown rotationMode',
        { rotationMode: 'poll' },
        /rotationMode must be auto, reconciler or republish, got "poll"/,
      ],
      [
        'a rotationPollInterval that is not a Go duration',
        { enableSecretRotation: true, rotationPollInterval: '2 minutes' },
        /rotationPollInterval must be a Go duration/,
      ],
      [
        'an unknown fsGroupPolicy',
        { fsGroupPolicy: 'Group' },
        /fsGroupPolicy must be File, ReadWriteOnceWithFSType, None or empty, got "Group"/,
      ],
      ['an unknown logLevel', { logLevel: 'verbose' }, /logLevel must be error, warn, info or debug/],
      [
        'a relative kubeletRootDir',
        { linux: { kubeletRootDir: 'var/lib/kubelet' } },
        /linux\.kubeletRootDir must be an absolute path/,
      ],
      [
        'a provider this chart does not have',
        { providers: { aws: { enabled: true } } },
        /providers\.aws: this chart has no "aws" provider \(providers: file, vault, azure, exec, pki\)/,
      ],
      [
        'the exec provider without helpers',
        { providers: { exec: { enabled: true } } },
        /providers\.exec\.helpers must hold at least one helper .* or set providers\.exec\.helpersHostPath/,
      ],
      [
        'an exec helper name with a /',
        { providers: { exec: { enabled: true, helpers: { 'bin/sh': 'x' } } } },
        /providers\.exec\.helpers: "bin\/sh" is not a helper file name/,
      ],
      [
        'an exec helper name starting with a dot',
        { providers: { exec: { enabled: true, helpers: { '..data': 'x' } } } },
        /providers\.exec\.helpers: "\.\.data" is not a helper file name/,
      ],
      [
        'an exec helper file outside a subdirectory',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, helperFiles: { 'greeting.txt': 'x' } } } },
        /providers\.exec\.helperFiles: "greeting\.txt" must be a relative path in a subdirectory/,
      ],
      [
        'an exec helper file with a .. segment',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, helperFiles: { 'd/../e': 'x' } } } },
        /providers\.exec\.helperFiles: "d\/\.\.\/e" must be a relative path/,
      ],
      [
        'two exec helper files with the same ConfigMap key',
        {
          providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, helperFiles: { 'd/e_f': 'x', 'd_e/f': 'y' } } },
        },
        /both make the ConfigMap key "d_e_f"/,
      ],
      [
        'exec helpers from values and a hostPath',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, helpersHostPath: '/opt/h' } } },
        /providers\.exec: set helpers \(and helperFiles\) or helpersHostPath, not both/,
      ],
      [
        'a relative exec helpersHostPath',
        { providers: { exec: { enabled: true, helpersHostPath: 'opt/h' } } },
        /providers\.exec\.helpersHostPath must be an absolute path, got "opt\/h"/,
      ],
      [
        'an exec helperTimeout that is not a Go duration',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, helperTimeout: '10 seconds' } } },
        /providers\.exec\.helperTimeout must be a Go duration such as 10s, got "10 seconds"/,
      ],
      [
        'an exec maxConcurrentHelpers of 0',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, maxConcurrentHelpers: 0 } } },
        /providers\.exec\.maxConcurrentHelpers must be a positive whole number, got 0/,
      ],
      [
        'no exec HMAC key Secret name',
        { providers: { exec: { enabled: true, helpers: { 'a.sh': 'x' }, hmacKeySecret: { name: '' } } } },
        /providers\.exec\.hmacKeySecret\.name and \.key must name the Secret/,
      ],
      [
        'a pki minDuration that is not a Go duration',
        { providers: { pki: { enabled: true, minDuration: 'one hour' } } },
        /providers\.pki\.minDuration must be a Go duration such as 1h, got "one hour"/,
      ],
      [
        'a pki healthPort that is not a port',
        { providers: { pki: { enabled: true, healthPort: 'health' } } },
        /providers\.pki\.healthPort must be a port number, got health/,
      ],
      [
        'an azure cloudName that is not a cloud',
        { providers: { azure: { enabled: true, cloudName: 'AzureCloudX' } } },
        /providers\.azure\.cloudName must be AzurePublicCloud, .* got "AzureCloudX"/,
      ],
      [
        'an azure constructPEMChain that is not a boolean',
        { providers: { azure: { enabled: true, constructPEMChain: 'yes' } } },
        /providers\.azure\.constructPEMChain must be true or false, got yes/,
      ],
      [
        'an azure healthPort that is not a port',
        { providers: { azure: { enabled: true, healthPort: 'health' } } },
        /providers\.azure\.healthPort must be a port number, got health/,
      ],
      [
        'the vault provider without vaultAddress',
        { providers: { vault: { enabled: true } } },
        /providers\.vault\.vaultAddress must be Vault's http:\/\/ or https:\/\/ address .* got ""/,
      ],
      [
        'a vaultAddress that is not a URL',
        { providers: { vault: { enabled: true, vaultAddress: 'vault.vault.svc:8200' } } },
        /providers\.vault\.vaultAddress must be/,
      ],
      [
        'a vaultAuthMountPath with a .. segment',
        { providers: { vault: { enabled: true, vaultAddress: 'https://v:8200', vaultAuthMountPath: 'k8s/..' } } },
        /providers\.vault\.vaultAuthMountPath must be an auth mount path/,
      ],
      [
        'a CA from both a ConfigMap and a Secret',
        {
          providers: {
            vault: { enabled: true, vaultAddress: 'https://v:8200', caCert: { configMapName: 'a', secretName: 'b' } },
          },
        },
        /providers\.vault\.caCert: set configMapName or secretName, not both/,
      ],
      [
        'no HMAC key Secret name',
        { providers: { vault: { enabled: true, vaultAddress: 'https://v:8200', hmacKeySecret: { name: '' } } } },
        /providers\.vault\.hmacKeySecret\.name and \.key must name the Secret/,
      ],
    ];
    for (const [what, values, message] of cases) {
      it(what, async () => {
        const err = await helm.template(values).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(err?.message).to.match(message);
      });
    }
  });
});
