import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { csiDriverTextForAzure, csiDriverTextForVault, type Obj } from '../support/deploy-manifests.js';
import { CHART_DIR, createHelm, parseManifests, type Helm, type Manifest } from '../support/helm.js';
import { mergeValues, RECOMMENDED_VALUES } from '../support/helm-value-sets.js';

// deploy/ (kubectl apply -k) and the chart with deploy/'s setup (RECOMMENDED_VALUES; the
// chart's defaults are upstream's) express the same install: the same objects, container args, RBAC rules, CSIDriver spec and volumes.
// Released as `csi-secrets-store` in kube-system with nameOverride=csi-secrets-store, the
// chart uses deploy/'s names (its defaults follow upstream's chart naming instead).
// Documented differences (docs/helm.md#the-chart-and-deploy), removed before comparing:
// Helm's and the chart's labels, the CRDs' helm.sh/resource-policy annotation, and the
// names of the provider-directory volumes (upstream's chart and deploy/ number them in
// opposite orders), compared by host path instead.
// The vault provider is an opt-in on both sides: providers.vault.enabled with deploy/'s
// Vault address renders what a user gets by uncommenting provider-vault-daemonset.yaml in
// kustomization.yaml and the tokenRequests (with serviceAccountTokenInSecrets, the chart
// renders for Kubernetes 1.36) in csidriver.yaml. The azure provider likewise:
// providers.azure.enabled renders provider-azure-daemonset.yaml and the CSIDriver with the
// api://AzureADTokenExchange entry of its comment uncommented. The exec provider:
// providers.exec.enabled with deploy/examples/exec's helpers as values renders
// provider-exec-daemonset.yaml and that example's ConfigMaps; the pki provider:
// providers.pki.enabled renders provider-pki-daemonset.yaml. Neither adds a token audience.

const DEPLOY = join(CHART_DIR, '../../deploy');

/** The objects `kubectl apply -k deploy/` creates, from kustomization.yaml's resources. */
function deployObjects(): Manifest[] {
  const kustomization = parse(readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.flatMap((file) => parseManifests(readFileSync(join(DEPLOY, file), 'utf8')));
}

/** The objects `kubectl apply -k deploy/sync-controller/` creates. */
function syncControllerObjects(): Manifest[] {
  const dir = join(DEPLOY, 'sync-controller');
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.flatMap((file) => parseManifests(readFileSync(join(dir, file), 'utf8')));
}

/** deploy/ with the vault provider opted in: its DaemonSet added, the CSIDriver's vault comments uncommented. */
function deployObjectsWithVault(): Manifest[] {
  const csiDriver = parseManifests(csiDriverTextForVault());
  const base = deployObjects().map((o) => (o.kind === 'CSIDriver' ? (csiDriver[0] as Manifest) : o));
  return [...base, ...parseManifests(readFileSync(join(DEPLOY, 'provider-vault-daemonset.yaml'), 'utf8'))];
}

/** deploy/ with the azure provider opted in: its DaemonSet added, the CSIDriver's workload-identity comment uncommented. */
function deployObjectsWithAzure(): Manifest[] {
  const csiDriver = parseManifests(csiDriverTextForAzure());
  const base = deployObjects().map((o) => (o.kind === 'CSIDriver' ? (csiDriver[0] as Manifest) : o));
  return [...base, ...parseManifests(readFileSync(join(DEPLOY, 'provider-azure-daemonset.yaml'), 'utf8'))];
}

/** deploy/ with the exec provider opted in: its DaemonSet and the example's helpers ConfigMaps added. */
function deployObjectsWithExec(): Manifest[] {
  return [
    ...deployObjects(),
    ...['provider-exec-daemonset.yaml', 'examples/exec/helpers-configmap.yaml'].flatMap((f) =>
      parseManifests(readFileSync(join(DEPLOY, f), 'utf8')),
    ),
  ];
}

/** The chart values that render deploy/examples/exec's ConfigMaps: helpers, and helper files by path (a key's "_" is the path's "/"). */
function execValuesOfExample(): Record<string, unknown> {
  const [helpers, files] = parseManifests(readFileSync(join(DEPLOY, 'examples/exec/helpers-configmap.yaml'), 'utf8'));
  const items = (
    deployObjectsWithExec().find(
      (o) => o.kind === 'DaemonSet' && o.metadata?.name === 'csi-secrets-store-provider-exec',
    )?.['spec'].template.spec.volumes as Obj[]
  ).find((v) => v['name'] === 'helpers')?.['projected'].sources[1].configMap.items as { key: string; path: string }[];
  const data = (files?.['data'] ?? {}) as Record<string, string>;
  return {
    enabled: true,
    helpers: helpers?.['data'],
    helperFiles: Object.fromEntries(items.map((i) => [i.path, data[i.key]])),
  };
}

/** The Vault address deploy/provider-vault-daemonset.yaml is written for. */
function deployVaultAddress(): string {
  const text = readFileSync(join(DEPLOY, 'provider-vault-daemonset.yaml'), 'utf8');
  const address = /^\s*- --vault-addr=(\S+)$/m.exec(text)?.[1];
  if (address === undefined) throw new Error('deploy/provider-vault-daemonset.yaml has no --vault-addr argument');
  return address;
}

/** Keeps only labels that carry meaning beyond bookkeeping: RBAC aggregation. */
function meaningfulLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  const kept = Object.entries(labels ?? {}).filter(([k]) => k.startsWith('rbac.authorization.k8s.io/'));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** Names each hostPath volume after its host path, in volumes and every container's mounts. */
function volumesByHostPath(podSpec: Obj): void {
  const rename = new Map<string, string>();
  for (const v of (podSpec['volumes'] ?? []) as Obj[]) {
    if (v['hostPath']) rename.set(v['name'], `host:${String(v['hostPath'].path).replace(/\/$/, '')}`);
  }
  for (const v of podSpec['volumes'] ?? []) v['name'] = rename.get(v['name']) ?? v['name'];
  podSpec['volumes']?.sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
  for (const c of [...(podSpec['initContainers'] ?? []), ...(podSpec['containers'] ?? [])]) {
    for (const m of c['volumeMounts'] ?? []) m['name'] = rename.get(m['name']) ?? m['name'];
    c['volumeMounts']?.sort((a: { mountPath: string }, b: { mountPath: string }) =>
      a.mountPath.localeCompare(b.mountPath),
    );
  }
}

/** An object without the documented differences, ready for deep comparison. */
function normalise(obj: Manifest): Manifest {
  const copy = JSON.parse(JSON.stringify(obj)) as Manifest;
  const meta = copy.metadata as Obj;
  meta['labels'] = meaningfulLabels(meta['labels']);
  if (meta['annotations']) delete meta['annotations']['helm.sh/resource-policy'];
  if (meta['annotations'] && Object.keys(meta['annotations']).length === 0) delete meta['annotations'];
  const template = copy['spec']?.template;
  if (template) {
    template.metadata.labels = meaningfulLabels(template.metadata.labels);
    volumesByHostPath(template.spec);
  }
  return JSON.parse(JSON.stringify(copy)) as Manifest;
}

const key = (o: Manifest) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/** Asserts the chart's and deploy/'s objects are the same, kind and name first, then each in full. */
function expectSameInstall(chart: Map<string, Manifest>, deploy: Map<string, Manifest>): void {
  expect([...chart.keys()].sort()).to.deep.equal([...deploy.keys()].sort());
  const differing = [...deploy]
    .filter(([k, want]) => chart.has(k) && !isDeepStrictEqual(chart.get(k), want))
    .map(([k]) => k);
  // The first difference in full, naming all of them.
  for (const k of differing)
    expect(chart.get(k), `differing: ${differing.join(', ')}; first: ${k}`).to.deep.equal(deploy.get(k));
}

/** The chart rendered with `values` (release csi-secrets-store in kube-system) and `objects` of deploy/, both keyed and normalised. */
async function renderBoth(
  helm: Helm,
  values: Record<string, unknown>,
  objects: readonly Manifest[],
): Promise<{ chart: Map<string, Manifest>; deploy: Map<string, Manifest> }> {
  const rendered = await helm.template(
    mergeValues(RECOMMENDED_VALUES, { nameOverride: 'csi-secrets-store', ...values }),
    { release: 'csi-secrets-store', namespace: 'kube-system' },
  );
  return {
    chart: new Map(rendered.map((o) => [key(o), normalise(o)])),
    deploy: new Map(objects.map((o) => [key(o), normalise(o)])),
  };
}

/** The chart rendered with `values` and deploy/'s `objects()`, keyed and normalised (renderBoth). */
interface RenderedInstall {
  readonly chart: Map<string, Manifest>;
  readonly deploy: Map<string, Manifest>;
}

/** A describe block whose tests read the chart and deploy/ as rendered once before them (a real helm each). */
function describeSameInstall(
  title: string,
  values: Record<string, unknown>,
  objects: () => readonly Manifest[],
  tests: (rendered: () => RenderedInstall) => void,
): void {
  describe(title, function () {
    this.timeout(60_000);
    let helm: Helm | undefined;
    let install: RenderedInstall | undefined;
    before(async () => {
      helm = createHelm();
      install = await renderBoth(helm, values, objects());
    });
    after(() => helm?.cleanup());
    tests(() => {
      if (!install) throw new Error(`${title}: not rendered`);
      return install;
    });
  });
}

// A provider opted in on both sides: its DaemonSet, and its token audience on the CSIDriver.
const OPTED_IN_PROVIDERS = [
  {
    provider: 'vault',
    values: { vault: { enabled: true, vaultAddress: deployVaultAddress() } },
    deployObjects: deployObjectsWithVault,
    audience: 'its token audience',
    tokenRequests: [{ audience: 'vault', expirationSeconds: 600 }],
  },
  {
    provider: 'azure',
    values: { azure: { enabled: true } },
    deployObjects: deployObjectsWithAzure,
    audience: 'the workload identity audience',
    tokenRequests: [{ audience: 'api://AzureADTokenExchange' }],
  },
];

for (const c of OPTED_IN_PROVIDERS) {
  describeSameInstall(
    `Helm chart with the ${c.provider} provider and deploy/ with it opted in express the same install`,
    { providers: c.values },
    () => c.deployObjects(),
    (rendered) => {
      it(`renders the same objects, the ${c.provider} DaemonSet and the CSIDriver with ${c.audience} included`, () => {
        const { chart, deploy } = rendered();
        expect(chart.has(`DaemonSet/kube-system/csi-secrets-store-provider-${c.provider}`)).to.equal(true);
        expect(chart.get('CSIDriver//secrets-store.csi.k8s.io')?.['spec'].tokenRequests).to.deep.equal(c.tokenRequests);
        expectSameInstall(chart, deploy);
      });
    },
  );
}

describeSameInstall(
  'Helm chart with the exec provider and deploy/ with it opted in express the same install',
  { providers: { exec: execValuesOfExample() } },
  () => deployObjectsWithExec(),
  (rendered) => {
    it("renders the same objects: the exec DaemonSet and, from values, deploy/examples/exec's helpers ConfigMaps; no token audience", () => {
      const { chart, deploy } = rendered();
      expect(chart.has('DaemonSet/kube-system/csi-secrets-store-provider-exec')).to.equal(true);
      expect(chart.has('ConfigMap/kube-system/csi-secrets-store-provider-exec-helpers')).to.equal(true);
      expect(chart.has('ConfigMap/kube-system/csi-secrets-store-provider-exec-helper-files')).to.equal(true);
      expect(chart.get('CSIDriver//secrets-store.csi.k8s.io')?.['spec'].tokenRequests).to.equal(undefined);
      expectSameInstall(chart, deploy);
    });
  },
);

describeSameInstall(
  'Helm chart with the pki provider and deploy/ with it opted in express the same install',
  { providers: { pki: { enabled: true } } },
  () => [...deployObjects(), ...parseManifests(readFileSync(join(DEPLOY, 'provider-pki-daemonset.yaml'), 'utf8'))],
  (rendered) => {
    it('renders the same objects, the pki DaemonSet included, no token audience', () => {
      const { chart, deploy } = rendered();
      expect(chart.has('DaemonSet/kube-system/csi-secrets-store-provider-pki')).to.equal(true);
      expect(chart.get('CSIDriver//secrets-store.csi.k8s.io')?.['spec'].tokenRequests).to.equal(undefined);
      expectSameInstall(chart, deploy);
    });
  },
);

describeSameInstall(
  "Helm chart with deploy/'s setup (RECOMMENDED_VALUES) and deploy/ express the same install",
  {},
  () => deployObjects(),
  (rendered) => {
    it('renders the same objects (kind, namespace, name)', () => {
      const { chart, deploy } = rendered();
      expect([...chart.keys()].sort()).to.deep.equal([...deploy.keys()].sort());
    });

    it('every object is the same apart from the documented differences', () => {
      const { chart, deploy } = rendered();
      expectSameInstall(chart, deploy);
    });

    it('renders no vault, azure, exec or pki provider and no token audience by default', () => {
      const { chart } = rendered();
      expect([...chart.keys()].filter((k) => /vault|azure|exec|pki/.test(k))).to.deep.equal([]);
      expect(chart.get('CSIDriver//secrets-store.csi.k8s.io')?.['spec'].tokenRequests).to.equal(undefined);
    });
  },
);

describeSameInstall(
  'Helm chart with syncController.enabled and deploy/ plus deploy/sync-controller/ express the same install',
  { syncController: { enabled: true } },
  () => [...deployObjects(), ...syncControllerObjects()],
  (rendered) => {
    it('renders the same objects: the SecretSync CRD, RBAC, admission policies, their ConfigMap and the Deployment included', () => {
      const { chart, deploy } = rendered();
      const sync = [...chart.keys()].filter((k) => /secretsync|sync-controller/.test(k)).sort();
      expect(sync).to.have.length(20);
      expect(sync).to.include.members([
        'CustomResourceDefinition//secretsyncs.secret-sync.x-k8s.io',
        'ConfigMap/kube-system/secrets-store-sync-controller-config',
        'Deployment/kube-system/secrets-store-sync-controller',
        'ValidatingAdmissionPolicy//secrets-store-sync-controller-validate-token-policy',
      ]);
      expectSameInstall(chart, deploy);
    });
  },
);
