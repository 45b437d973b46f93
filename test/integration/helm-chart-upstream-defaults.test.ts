import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseDriverConfig } from '../../driver/config.js';
import {
  CHART_DIR,
  createHelm,
  expandArgs,
  parseManifests,
  podContainer,
  RENDER_KUBE_VERSION,
} from '../support/helm.js';
import type { Helm, Manifest } from '../support/helm.js';
import { requirePeer } from '../support/peers.js';

// Our chart's defaults against upstream's chart (the cached peer, v1.6.x: v1.6.0 and v1.6.1
// differ only in image tags): an upstream values file must give upstream's behaviour and
// RBAC, and our own keys act only when set (docs/helm.md#defaults).

/** Upstream keys whose default is not upstream's here, each with its reason (docs/helm.md). */
const NOT_UPSTREAMS: Readonly<Record<string, string>> = {
  'linux.image.repository': "our driver's image",
  'linux.image.tag': "our driver's image",
  'linux.crds.image': "upstream's CRD upgrade Job: none here (Helm applies the CRDs); accepted and ignored",
  'linux.crds.resources': 'the CRD upgrade Job, as above',
  'linux.crds.annotations': 'the CRD upgrade Job, as above',
  'linux.crds.podLabels': 'the CRD upgrade Job, as above',
  windows: 'no Windows image: windows.enabled (false, as upstream) is the only windows key',
};

type Tree = Record<string, unknown>;

/** Every leaf of a values tree as a dotted path (empty maps and lists are leaves). */
function leaves(tree: unknown, prefix = ''): [string, unknown][] {
  if (tree === null || typeof tree !== 'object' || Array.isArray(tree) || Object.keys(tree).length === 0)
    return [[prefix, tree]];
  return Object.entries(tree as Tree).flatMap(([k, v]) => leaves(v, prefix === '' ? k : `${prefix}.${k}`));
}

function at(tree: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((t, k) => (t as Tree | undefined)?.[k], tree);
}

function excepted(path: string): boolean {
  return Object.keys(NOT_UPSTREAMS).some((p) => (path === p || path.startsWith(`${p}.`)) && path !== 'windows.enabled');
}

describe("Helm chart defaults are upstream v1.6.x's: same values, args, CSIDriver and RBAC (real helm, upstream's chart)", function () {
  this.timeout(60_000);
  let helm: Helm;
  let upstreamDir: string;
  let ours: Manifest[];
  let theirs: Manifest[];

  async function render(chart: string): Promise<Manifest[]> {
    const args = ['template', 'csi-secrets-store', chart, '--namespace', 'kube-system'];
    return parseManifests((await helm.run([...args, '--kube-version', RENDER_KUBE_VERSION])).stdout);
  }
  const driverDs = (objects: Manifest[]) =>
    objects.find((o) => o.kind === 'DaemonSet' && !/provider/.test(o.metadata?.name ?? ''));
  const driverArgs = (objects: Manifest[]) => {
    const ds = driverDs(objects);
    if (!ds) throw new Error('no driver DaemonSet rendered');
    return expandArgs(podContainer(ds, 'secrets-store'), { KUBE_NODE_NAME: 'n' });
  };

  before(async () => {
    helm = createHelm();
    upstreamDir = requirePeer('UPSTREAM_CHART');
    [ours, theirs] = [await render(CHART_DIR), await render(upstreamDir)];
  });
  after(() => helm?.cleanup());

  it("every key of upstream's values.yaml defaults to upstream's value, but for the listed exceptions", async () => {
    const upstream = parse(await readFile(join(upstreamDir, 'values.yaml'), 'utf8')) as Tree;
    const own = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Tree;
    const differing = leaves(upstream)
      .filter(([path]) => !excepted(path))
      .filter(([path, value]) => JSON.stringify(at(own, path)) !== JSON.stringify(value))
      .map(([path, value]) => `${path}: upstream ${JSON.stringify(value)}, ours ${JSON.stringify(at(own, path))}`);
    expect(differing).to.deep.equal([]);
  });

  it("renders upstream's driver settings: no rotation, upstream's interval, sync off, no --rotation-mode", () => {
    const [o, t] = [parseDriverConfig(driverArgs(ours), {}), parseDriverConfig(driverArgs(theirs), {})];
    expect(o).to.deep.include({
      enableSecretRotation: t.enableSecretRotation,
      rotationPollIntervalMs: t.rotationPollIntervalMs,
      rotationMode: 'auto',
      metricsAddr: t.metricsAddr,
      providerDirs: t.providerDirs,
      maxCallRecvMsgSize: t.maxCallRecvMsgSize,
      logLevel: t.logLevel,
    });
    // Upstream's driver has no switch: without its sync role (syncSecret.enabled false) syncs fail 403. Ours is off.
    expect(o.enableSecretSync).to.equal(false);
    expect(driverArgs(ours).some((a) => a.startsWith('--rotation-mode'))).to.equal(false);
  });

  it("renders upstream's CSIDriver spec, the same ClusterRoles bound to the driver, and no provider", () => {
    const spec = (objects: Manifest[]) => objects.find((o) => o.kind === 'CSIDriver')?.['spec'];
    expect(spec(ours)).to.deep.equal(spec(theirs));
    // The driver's: upstream's CRD hook Jobs have roles of their own.
    const bound = (objects: Manifest[]) =>
      objects
        .filter((o) => o.kind === 'ClusterRoleBinding')
        .filter((b) => (b['subjects'] as { name: string }[]).some((s) => s.name === 'secrets-store-csi-driver'))
        .map((b) => b['roleRef'].name as string)
        .sort();
    const roles = (objects: Manifest[]) =>
      objects
        .filter((o) => o.kind === 'ClusterRole' && !/-crds$/.test(o.metadata?.name ?? ''))
        .map((r) => r.metadata?.name)
        .sort();
    expect(bound(ours)).to.deep.equal(bound(theirs));
    expect(roles(ours)).to.deep.equal(roles(theirs));
    expect(ours.filter((o) => o.kind === 'DaemonSet').map((o) => o.metadata?.name)).to.have.length(1);
  });

  it("schedules and sizes the driver pods as upstream's chart: affinity, priority, resources, registrar verbosity", () => {
    const pod = (objects: Manifest[]) => driverDs(objects)?.['spec'].template.spec;
    const [o, t] = [pod(ours), pod(theirs)];
    expect(o.affinity).to.deep.equal(t.affinity);
    expect(o.priorityClassName).to.equal(t.priorityClassName);
    expect(o.tolerations).to.deep.equal(t.tolerations);
    for (const name of ['secrets-store', 'node-driver-registrar', 'liveness-probe']) {
      const [oc, tc] = [
        podContainer(driverDs(ours) as Manifest, name),
        podContainer(driverDs(theirs) as Manifest, name),
      ];
      expect(oc['resources'], name).to.deep.equal(tc['resources']);
    }
    const verbosity = (objects: Manifest[]) =>
      (podContainer(driverDs(objects) as Manifest, 'node-driver-registrar')['args'] as string[]).find((a) =>
        a.startsWith('--v='),
      );
    expect(verbosity(ours)).to.equal(verbosity(theirs));
  });
});
