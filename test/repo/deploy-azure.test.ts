import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { parseFlags } from '../../lib/flags.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { azureHealthAddress, azureProviderFlags, azureSettings } from '../../providers/azure/settings.js';
import { AZURE_PROVIDER_NAME, checkAzureProviderDaemonSet } from '../support/azure-provider-daemonset.js';
import { azureClassShape } from '../support/azure-class-shape.js';
import {
  AZURE_PROVIDER_DS,
  CSI_DRIVER_NAME,
  csiDriverTextForAzure,
  DEPLOY,
  DRIVER_DS,
  find,
  MANIFESTS,
  type Obj,
} from '../support/deploy-manifests.js';

// Static checks of deploy/'s azure provider (opt-in) and deploy/examples/azure against the
// provider's own flag table and Azure's documented class shape. The chart's rendering:
// test/integration/helm-chart-render.test.ts.

/**
 * Every argument Azure's own DaemonSet (deployment/provider-azure-installer.yaml) and Helm
 * chart (templates/provider-azure-installer.yaml, v1.8.2) pass, with values set: a user's
 * upstream args must start this provider. Missing here: --custom-user-agent (chart value
 * linux.customUserAgent), which the provider does not accept yet.
 */
const UPSTREAM_ARGS = [
  '--endpoint=unix:///provider/azure.sock',
  '--log-format-json=true',
  '-v=2',
  '--construct-pem-chain=true',
  '--healthz-port=8989',
  '--healthz-path=/healthz',
  '--healthz-timeout=5s',
  '--write-cert-and-key-in-separate-files=true',
];
const WORKLOAD_IDENTITY_AUDIENCE = 'api://AzureADTokenExchange';

describe('deploy: azure provider (opt-in)', () => {
  it('is listed commented in kustomization.yaml', () => {
    expect(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')).to.match(
      /^ {2}# - provider-azure-daemonset\.yaml$/m,
    );
  });

  it('passes flags the azure provider accepts, serves azure.sock where the driver looks, on the host network, unprivileged', () => {
    checkAzureProviderDaemonSet(AZURE_PROVIDER_DS(), DRIVER_DS(), {
      constructPemChain: true,
      writeCertAndKeyInSeparateFiles: false,
      cloudName: 'AzurePublicCloud',
      healthPort: 8989,
    });
  });

  it("accepts every argument of Azure's DaemonSet and chart, the compatibility ones ignored with a warning", () => {
    const flags = parseFlags(UPSTREAM_ARGS, { ...commonProviderFlags(AZURE_PROVIDER_NAME), ...azureProviderFlags });
    expect(flags.positionals).to.deep.equal([]);
    expect([...flags.ignoredGiven]).to.deep.equal(['log-format-json', 'v', 'healthz-timeout']);
    const settings = azureSettings(flags);
    expect([settings.constructPemChain, settings.writeCertAndKeyInSeparateFiles]).to.deep.equal([true, true]);
    expect(azureHealthAddress(flags)).to.equal(':8989');
  });

  it("csidriver.yaml's commented tokenRequests, uncommented for azure, request the workload identity audience", () => {
    const spec = (parse(csiDriverTextForAzure()) as Obj)['spec'] as Obj;
    expect(spec['tokenRequests']).to.deep.equal([{ audience: WORKLOAD_IDENTITY_AUDIENCE }]);
    expect(spec['serviceAccountTokenInSecrets']).to.equal(true);
    const { tokenRequests: _t, serviceAccountTokenInSecrets: _s, ...rest } = spec;
    expect(rest).to.deep.equal(find('CSIDriver', CSI_DRIVER_NAME).obj['spec']);
  });
});

describe('deploy/examples/azure', () => {
  const classes = MANIFESTS.filter(
    (m) => m.file.startsWith('examples/azure/') && m.obj['kind'] === 'SecretProviderClass',
  );
  const pods = MANIFESTS.filter((m) => m.file.startsWith('examples/azure/') && m.obj['kind'] === 'Pod').map(
    (m) => m.obj,
  );
  const shapes = new Map(
    classes.map((m) => [m.obj['metadata'].name as string, azureClassShape(parseSecretProviderClass(m.obj).parameters)]),
  );

  it('has a class for each identity mode, certificates as PEM and PFX, a key, a cert, a version history and a TLS Secret', () => {
    const all = [...shapes.values()];
    expect(new Set(all.map((s) => s.auth))).to.deep.equal(
      new Set(['workload-identity', 'service-principal', 'managed-identity']),
    );
    const objects = all.flatMap((s) => s.objects);
    expect(
      objects.some((o) => o.objectType === 'secret' && o.objectFormat === 'pfx' && o.objectEncoding === 'base64'),
      'a PFX file',
    ).to.equal(true);
    for (const t of ['key', 'cert'] as const)
      expect(
        objects.some((o) => o.objectType === t),
        t,
      ).to.equal(true);
    expect(
      objects.some((o) => o.history > 1),
      'objectVersionHistory',
    ).to.equal(true);
    expect(
      objects.some((o) => o.objectEncoding === 'hex') && objects.some((o) => o.objectEncoding === 'base64'),
      'objectEncoding',
    ).to.equal(true);
    const tls = classes
      .flatMap((m) => parseSecretProviderClass(m.obj).secretObjects)
      .filter((s) => s.type === 'kubernetes.io/tls');
    expect(tls.length).to.be.greaterThan(0);
  });

  for (const m of classes) {
    const name = m.obj['metadata'].name as string;
    it(`${name} is valid for the driver and has Azure's class shape; its secretObjects name files it writes`, () => {
      const spc = parseSecretProviderClass(m.obj);
      expect(spc.provider).to.equal(AZURE_PROVIDER_NAME);
      expect(spc.namespace).to.equal('default');
      const shape = shapes.get(name);
      for (const so of spc.secretObjects)
        for (const d of so.data) expect(shape?.files, `${so.secretName}: ${d.objectName}`).to.include(d.objectName);
      for (const so of spc.secretObjects.filter((s) => s.type === 'kubernetes.io/tls')) {
        expect(so.data.map((d) => d.key).sort()).to.deep.equal(['tls.crt', 'tls.key']);
        // Both from one PEM file holding the key and the chain: a certificate's secret.
        for (const d of so.data) {
          const o = shape?.objects.find((x) => x.fileName === d.objectName);
          expect([o?.objectType, o?.objectFormat, o?.objectEncoding], d.objectName).to.deep.equal([
            'secret',
            'pem',
            'utf-8',
          ]);
        }
      }
    });
  }

  it("the service principal class is mounted with a nodePublishSecretRef; the others' pods have none", () => {
    for (const pod of pods) {
      const csi = (pod['spec'].volumes as Obj[]).find((v) => v['csi'])?.['csi'] as Obj;
      expect(csi).to.deep.include({ driver: CSI_DRIVER_NAME, readOnly: true });
      const auth = shapes.get(csi['volumeAttributes'].secretProviderClass)?.auth;
      expect(auth, pod['metadata'].name).to.be.a('string');
      expect(csi['nodePublishSecretRef'] !== undefined, pod['metadata'].name).to.equal(auth === 'service-principal');
    }
    expect(
      pods.some(
        (p) =>
          shapes.get((p['spec'].volumes as Obj[]).find((v) => v['csi'])?.['csi'].volumeAttributes.secretProviderClass)
            ?.auth === 'service-principal',
      ),
    ).to.equal(true);
  });

  it('the workload identity pod runs as the account the README federates, annotated with the class clientID', () => {
    const pod = find('Pod', 'azure-demo').obj;
    const account = find('ServiceAccount', 'azure-demo').obj;
    expect(pod['spec'].serviceAccountName).to.equal(account['metadata'].name);
    expect(pod['metadata'].namespace).to.equal(account['metadata'].namespace);
    const className = (pod['spec'].volumes as Obj[]).find((v) => v['csi'])?.['csi'].volumeAttributes
      .secretProviderClass as string;
    const shape = shapes.get(className);
    expect(shape?.auth).to.equal('workload-identity');
    expect(account['metadata'].annotations?.['azure.workload.identity/client-id']).to.equal(shape?.clientID);
    const readme = readFileSync(join(DEPLOY, 'examples/azure/README.md'), 'utf8');
    expect(readme).to.include(
      `--subject "system:serviceaccount:${account['metadata'].namespace}:${account['metadata'].name}"`,
    );
    expect(readme).to.include(WORKLOAD_IDENTITY_AUDIENCE);
    // Every file the README lists exists, and every example file is listed.
    const listed = [...readme.matchAll(/^\| `([^`]+\.yaml)` \|/gm)].map((x) => x[1]).sort();
    const files = [
      ...new Set(
        MANIFESTS.filter((x) => x.file.startsWith('examples/azure/')).map((x) =>
          x.file.slice('examples/azure/'.length),
        ),
      ),
    ].sort();
    expect(listed).to.deep.equal(files);
  });
});
