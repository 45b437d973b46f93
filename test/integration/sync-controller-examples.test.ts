import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { parseFlags } from '../../lib/flags.js';
import { commonProviderFlags } from '../../providers/framework/run-provider.js';
import { parseVaultParameters } from '../../providers/vault/parameters.js';
import { providerSettings, vaultProviderFlags } from '../../providers/vault/settings.js';
import { parseSyncControllerConfig } from '../../sync-controller/config.js';
import { container, type Obj } from '../support/deploy-manifests.js';
import { sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { peerBinary } from '../support/peers.js';
import {
  installSyncControllerManifests,
  SECRET_SYNC_RESOURCE,
  startSyncControllerStack,
  type SecretSyncCondition,
  type SyncControllerStack,
} from '../support/sync-controller.js';
import { until } from '../support/until.js';

// examples/sync-controller/: the tls example run as its README says (its openssl and
// kubectl commands, then kubectl apply -k) against a real kube-apiserver with the
// controller and the file provider; the vault example's controller overlay rendered by
// kubectl kustomize and read by the controller's and the vault provider's own parsers.
// (The file example is what demo-sync applies: test/integration/demo-sync.test.ts.)

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLES = join(REPO, 'examples/sync-controller');
const KUBECTL = peerBinary('KUBECTL');

/** Runs `command` in bash with `env`, in `cwd`; resolves with stdout. */
function sh(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-euo', 'pipefail', '-c', command], { cwd, env, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command}\nfailed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** $PATH with the kubectl peer's directory first. */
const withKubectl = () => `${dirname(KUBECTL ?? '')}:${process.env['PATH'] ?? ''}`;

/** The ```sh blocks of a README, in order. */
async function shellBlocks(readme: string): Promise<string[]> {
  return [...(await readFile(readme, 'utf8')).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

const objectsOf = async (file: string) => parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as Obj);

describe('examples/sync-controller/tls: a kubernetes.io/tls Secret, as its README says (real kube-apiserver, kubectl)', function () {
  this.timeout(180_000);
  let cluster: KubeCluster;
  let stack: SyncControllerStack;
  let work: string;
  let env: NodeJS.ProcessEnv;
  const ns = 'sync-tls-demo';

  before(async function () {
    if (!KUBECTL) {
      process.stderr.write('    skipping: the kubectl test peer is missing (bash test/peers/install.sh kubectl)\n');
      this.skip();
    }
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    work = await mkdtemp(join(tmpdir(), 'ssc-tls-example-'));
    env = {
      PATH: withKubectl(),
      HOME: work,
      KUBECONFIG: join(cluster.dir, 'kubeconfig'),
    };
    stack = await startSyncControllerStack(cluster, {}, ['--rotation-poll-interval=0']);
  });

  after(async () => {
    await stack?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const readSecret = () => cluster.admin.core.readNamespacedSecret({ namespace: ns, name: 'web-tls' });
  const condition = async (type: string) => {
    const ss = (await cluster.admin.custom.getNamespacedCustomObject({
      ...SECRET_SYNC_RESOURCE,
      namespace: ns,
      name: 'web-tls',
    })) as { status?: { conditions?: SecretSyncCondition[] } };
    return ss.status?.conditions?.find((c) => c.type === type);
  };
  /** What the file provider sidecar's Secret volume would show: the source Secret's web.pem as a file. */
  const mirrorSource = async () => {
    const source = await cluster.admin.core.readNamespacedSecret({
      namespace: 'kube-system',
      name: 'sync-controller-file-source',
    });
    await mkdir(stack.providerRoot, { recursive: true });
    await writeFile(join(stack.providerRoot, 'web.pem'), Buffer.from(source.data?.['web.pem'] ?? '', 'base64'));
  };

  it('the certificate made and stored by the README, applied with kubectl apply -k: tls.crt and tls.key of one pair', async () => {
    const [makeCert, apply] = await shellBlocks(join(EXAMPLES, 'tls/README.md'));
    await sh(makeCert as string, work, env);
    await mirrorSource();
    // The README's second block from the repository: apply, then the two reads once the Secret exists.
    const [applyLine, ...reads] = (apply as string).trim().split('\n');
    expect(applyLine).to.equal('kubectl apply -k examples/sync-controller/tls/');
    await sh(applyLine as string, REPO, env);
    const { value: secret } = await until('Secret web-tls', () => readSecret().catch(() => undefined));
    expect(secret.type).to.equal('kubernetes.io/tls');
    expect(Object.keys(secret.data ?? {}).sort()).to.deep.equal(['tls.crt', 'tls.key']);
    const cert = new X509Certificate(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64'));
    expect(cert.subject).to.equal('CN=web.sync-tls-demo.svc');
    expect(cert.raw.equals(new X509Certificate(await readFile(join(work, 'web.crt'))).raw)).to.equal(true);
    const key = createPrivateKey(Buffer.from(secret.data?.['tls.key'] ?? '', 'base64'));
    expect(cert.checkPrivateKey(key)).to.equal(true);
    expect(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString()).not.to.include('PRIVATE KEY');
    const printed = await sh(reads.join('\n'), REPO, env);
    expect(printed).to.match(/^NAME +CLASS +SYNCED/);
    expect(printed).to.match(/\nsubject= ?CN ?= ?web\.sync-tls-demo\.svc\n$/);
  });

  it('a web.pem without its key: RemoteSecretStoreFetchFailed on a refresh, the Secret keeps its last good pair', async () => {
    const before = await readSecret();
    await writeFile(join(stack.providerRoot, 'web.pem'), await readFile(join(work, 'web.crt')));
    await sh(
      `kubectl -n ${ns} annotate --overwrite secretproviderclass web-cert secrets-store.csi.k8s.io/refresh-requested-at=now-1`,
      work,
      env,
    );
    const { value: failed } = await until('a failed condition', async () => {
      const c = await condition('SecretUpdated');
      return c?.status === 'False' ? c : undefined;
    });
    expect(failed.reason).to.equal('RemoteSecretStoreFetchFailed');
    expect((await readSecret()).data).to.deep.equal(before.data);
  });
});

describe('examples/sync-controller/vault: the controller overlay and the class (kubectl kustomize, our parsers)', function () {
  this.timeout(60_000);

  it('the overlay adds the vault provider on the shared socket volume and the audience the class logs in with', async function () {
    if (!KUBECTL) {
      process.stderr.write('    skipping: the kubectl test peer is missing (bash test/peers/install.sh kubectl)\n');
      this.skip();
    }
    const rendered = await sh(`kubectl kustomize ${join(EXAMPLES, 'vault/controller')}`, REPO, {
      PATH: withKubectl(),
      HOME: tmpdir(),
    });
    const objects = parseAllDocuments(rendered).map((d) => d.toJS() as Obj);
    // The overlay adds no object: the same ones as deploy/sync-controller, the Deployment patched.
    const base = await sh(`kubectl kustomize ${join(REPO, 'deploy/sync-controller')}`, REPO, {
      PATH: withKubectl(),
      HOME: tmpdir(),
    });
    const kindAndName = (o: Obj) => `${String(o['kind'])} ${String(o['metadata']?.name)}`;
    expect(objects.map(kindAndName).sort()).to.deep.equal(
      parseAllDocuments(base)
        .map((d) => kindAndName(d.toJS() as Obj))
        .sort(),
    );
    expect(objects.map((o) => o['kind'])).to.include('Deployment');
    const deployment = objects.find((o) => o['kind'] === 'Deployment') as Obj;
    const controller = container(deployment, 'controller');
    const config = parseSyncControllerConfig(controller['args'] as string[], {});
    expect(config.audiences).to.deep.equal(['vault']);
    const vault = container(deployment, 'provider-vault');
    const [name, ...flags] = vault['args'] as string[];
    expect(name).to.equal('vault');
    const parsed = parseFlags(flags, { ...commonProviderFlags('vault'), ...vaultProviderFlags });
    expect(parsed.positionals).to.deep.equal([]);
    expect(providerSettings({}, parsed).vaultAuthMountPath).to.equal('kubernetes');
    const endpoint = flags.find((f) => f.startsWith('--endpoint='));
    expect(endpoint).to.equal(`--endpoint=unix://${config.providerDir}/vault.sock`);
    const socketVolume = (c: Obj) =>
      (c['volumeMounts'] as Obj[]).find((m) => m['mountPath'] === config.providerDir)?.['name'];
    expect(socketVolume(vault)).to.equal('providers').and.to.equal(socketVolume(controller));
    // The base's file provider stays.
    expect(container(deployment, 'provider-file')).to.be.an('object');

    const [cls] = await objectsOf(join(EXAMPLES, 'vault/secretproviderclass.yaml'));
    const params = parseVaultParameters(cls?.['spec'].parameters as Record<string, string>);
    expect(config.audiences).to.include(params.audience);
    expect(params.roleName).to.equal('sync-vault-demo');
    const [sync] = await objectsOf(join(EXAMPLES, 'vault/secretsync.yaml'));
    expect(sync?.['spec'].secretProviderClassName).to.equal(cls?.['metadata'].name);
    expect(sync?.['metadata'].namespace).to.equal(cls?.['metadata'].namespace);
    const sources = (sync?.['spec'].secretObject.data as Obj[]).map((d) => d['sourcePath']);
    expect(sources).to.deep.equal(params.objects.map((o) => o.objectName));
    const namespaceObjects = await objectsOf(join(EXAMPLES, 'vault/namespace.yaml'));
    expect(
      namespaceObjects.map((o) => `${o['kind']} ${o['metadata'].namespace ?? ''}/${o['metadata'].name}`),
    ).to.deep.equal([
      'Namespace /sync-vault-demo',
      `ServiceAccount sync-vault-demo/${sync?.['spec'].serviceAccountName}`,
    ]);
  });
});

describe('examples/sync-controller: each folder lists its manifests and applies to a real kube-apiserver (kubectl apply -k)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let env: NodeJS.ProcessEnv;
  let home: string;

  before(async function () {
    if (!KUBECTL) {
      process.stderr.write('    skipping: the kubectl test peer is missing (bash test/peers/install.sh kubectl)\n');
      this.skip();
    }
    cluster = await sharedKubeCluster();
    await installSyncControllerManifests(cluster, REPO);
    home = await mkdtemp(join(tmpdir(), 'ssc-examples-apply-'));
    env = { PATH: withKubectl(), HOME: home, KUBECONFIG: join(cluster.dir, 'kubeconfig') };
  });

  after(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  for (const example of ['file', 'vault', 'tls', 'vault/controller']) {
    it(`${example}/: its kustomization lists every manifest of the folder`, async () => {
      const dir = join(EXAMPLES, example);
      const [kustomization] = await objectsOf(join(dir, 'kustomization.yaml'));
      const listed = (kustomization?.['resources'] as string[]).filter((r) => r.endsWith('.yaml'));
      const patches = ((kustomization?.['patches'] ?? []) as Obj[]).flatMap((p) => (p['path'] ? [p['path']] : []));
      const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      expect([...listed, ...patches].sort()).to.deep.equal(files.sort());
    });
  }

  it('file/, vault/ and tls/ apply (the API server checks the SecretSyncs against the CRD); vault/controller/ passes a server-side dry run', async () => {
    for (const example of ['file', 'vault', 'tls']) {
      const out = await sh(`kubectl apply -k examples/sync-controller/${example}/`, REPO, env);
      expect(out).to.match(/^secretsync\.secret-sync\.x-k8s\.io\/[a-z-]+ (created|configured|unchanged)$/m);
      expect(out).to.match(
        /^secretproviderclass\.secrets-store\.csi\.x-k8s\.io\/[a-z-]+ (created|configured|unchanged)$/m,
      );
    }
    const dryRun = await sh('kubectl apply --dry-run=server -k examples/sync-controller/vault/controller/', REPO, env);
    expect(dryRun).to.match(/^deployment\.apps\/secrets-store-sync-controller created \(server dry run\)$/m);
  });
});
