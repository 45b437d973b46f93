import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { resourcePath } from '../driver/k8s/client/kube-api.js';
import type { Secret } from '../driver/k8s/client/types.js';
import { REFRESH_REQUESTED_ANNOTATION } from '../driver/k8s/constants.js';
import { parseFlags } from '../lib/flags.js';
import { secretSyncPath, type SecretSync } from '../sync-controller/secret-sync.js';
import { line, step } from './demo-output.js';
import { DemoSession } from './demo-session.js';
import {
  findKubePeers,
  installManifests,
  startCluster,
  startFileProvider,
  startGarbageCollector,
  startSyncController,
  type KubePeers,
} from './demo-sync-cluster.js';
import { kubectlRunner, untilObject, type Kubectl } from './demo-sync-kube.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The example the demo applies: the same manifests a user applies in a cluster. */
const EXAMPLE = join(REPO, 'examples/sync-controller/file');
const NAMESPACE = 'sync-file-demo';
const NAME = 'db';
const CLASS = 'db';

/** `secrets-store-csi demo-sync --help`. */
export const DEMO_SYNC_HELP = `secrets-store-csi demo-sync

Runs the SecretSync controller end to end on this machine: starts etcd, kube-apiserver and
kube-controller-manager (its garbage collector only) from the test peers, applies the
SecretProviderClass CRD and deploy/sync-controller's CRD and RBAC with kubectl, starts the
file provider and the controller (as its ServiceAccount, authorised only by that RBAC),
applies examples/sync-controller/file/, and shows: the Secret appears; the source file
changes and the class's ${REFRESH_REQUESTED_ANNOTATION} annotation brings the change
into the Secret; kubectl delete secret, and the controller puts it back; kubectl delete
secretsync, and the garbage collector deletes the Secret. It needs the test peers etcd,
kube-apiserver, kube-controller-manager and kubectl (bash test/peers/install.sh etcd
kube-apiserver kube-controller-manager kubectl); without them it says so and exits 1. It
takes no flags. Ctrl-C, SIGTERM or a closed terminal (SIGHUP) stops it at any point; it
still stops every process it started and deletes its directory (exit code 130, 143 or 129).
`;

const secretsPath = resourcePath({ version: 'v1', resource: 'secrets', namespace: NAMESPACE });
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const text = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');

/** Waits for the Secret to satisfy `want` (undefined: absent). */
function untilSecret(session: DemoSession, api: KubeApi, want: (s: Secret | undefined) => boolean, what: string) {
  return session.step(untilObject<Secret>(api, secretsPath, NAME, want, what));
}

/** The Secret's type, owner, label and data (the example's sample values). */
function showSecret(secret: Secret): void {
  const owner = secret.metadata?.ownerReferences?.[0];
  line(`type ${secret.type ?? ''}, owner ${owner ? `${owner.kind}/${owner.name}` : 'none'}`);
  line(`labels: ${JSON.stringify(secret.metadata?.labels ?? {})}`);
  for (const [key, value] of Object.entries(secret.data ?? {})) line(`${key}: ${JSON.stringify(text(value))}`);
}

/** Applies the example's namespace, class and SecretSync; shows the Secret and the SecretSync's status. */
async function showCreated(session: DemoSession, api: KubeApi, kubectl: Kubectl): Promise<Secret> {
  step('kubectl apply: examples/sync-controller/file/ (a namespace, a SecretProviderClass, a SecretSync)');
  const started = performance.now();
  const files = ['namespace.yaml', 'secretproviderclass.yaml', 'secretsync.yaml'].flatMap((f) => [
    '-f',
    join(EXAMPLE, f),
  ]);
  await kubectl(['apply', ...files]);
  step(`the Secret ${NAMESPACE}/${NAME} appears`);
  const secret = (await untilSecret(session, api, (s) => s !== undefined, 'the Secret')) as Secret;
  line(`after ${seconds(started)}`);
  showSecret(secret);
  const synced = (ss: SecretSync | undefined) =>
    ss?.status?.conditions?.some((c) => c.type === 'SecretCreated' && c.status === 'True') ?? false;
  await session.step(untilObject<SecretSync>(api, secretSyncPath(NAMESPACE), NAME, synced, 'the SecretSync status'));
  await kubectl(['-n', NAMESPACE, 'get', 'secretsync', NAME]);
  return secret;
}

/** Changes the source file, asks for a refresh through the class's annotation, shows the Secret follow. */
async function showSourceChange(session: DemoSession, api: KubeApi, kubectl: Kubectl, root: string): Promise<void> {
  step(`the source changes; the class's ${REFRESH_REQUESTED_ANNOTATION} annotation asks for a sync now`);
  const next = 'demo-db-password-2';
  // As a Secret volume changes: a new file renamed over the old one.
  await session.step(writeFile(join(root, '.db-password.new'), next));
  await session.step(rename(join(root, '.db-password.new'), join(root, 'db-password')));
  line(`db-password in the provider's source: ${JSON.stringify(next)}`);
  const started = performance.now();
  const at = `${REFRESH_REQUESTED_ANNOTATION}=${new Date().toISOString()}`;
  await kubectl(['-n', NAMESPACE, 'annotate', '--overwrite', 'secretproviderclass', CLASS, at]);
  await untilSecret(session, api, (s) => text(s?.data?.['password']) === next, 'the updated Secret');
  line(`the Secret has it after ${seconds(started)}: password ${JSON.stringify(next)}`);
}

/** Deletes the Secret with kubectl and shows the controller restore it (a watch, not the next poll). */
async function showRestore(session: DemoSession, api: KubeApi, kubectl: Kubectl, before: Secret): Promise<void> {
  step('kubectl delete secret: the controller puts it back at once');
  const started = performance.now();
  await kubectl(['-n', NAMESPACE, 'delete', 'secret', NAME]);
  const oldUid = before.metadata?.uid;
  const restored = (await untilSecret(
    session,
    api,
    (s) => s !== undefined && s.metadata?.uid !== oldUid,
    'the restored Secret',
  )) as Secret;
  line(
    `restored after ${seconds(started)} (a new Secret: uid ${oldUid?.slice(0, 8)}… -> ${restored.metadata?.uid?.slice(0, 8)}…)`,
  );
  showSecret(restored);
}

/** Deletes the SecretSync and shows the garbage collector delete its Secret (the owner reference). */
async function showGarbageCollection(session: DemoSession, api: KubeApi, kubectl: Kubectl): Promise<void> {
  step('kubectl delete secretsync: the garbage collector deletes its Secret');
  const started = performance.now();
  await kubectl(['-n', NAMESPACE, 'delete', 'secretsync', NAME]);
  await untilSecret(session, api, (s) => s === undefined, 'the Secret to be garbage-collected');
  line(`the Secret is gone after ${seconds(started)}`);
}

/** The demo's steps; every wait goes through the session so a signal ends it at once. */
async function showSteps(session: DemoSession, peers: KubePeers): Promise<void> {
  step(`working in ${session.work}`);
  const { plane, admin } = await startCluster(session);
  const kubectl = kubectlRunner(session, peers.KUBECTL, plane.kubeconfig, REPO);
  await installManifests(kubectl, REPO);
  // After the CRDs: the garbage collector then knows SecretSyncs from its first discovery.
  await startGarbageCollector(session, peers.KUBE_CONTROLLER_MANAGER, plane);
  const root = await startFileProvider(session, join(EXAMPLE, 'source-secret.yaml'));
  await startSyncController(session, plane, admin);
  const secret = await showCreated(session, admin, kubectl);
  await showSourceChange(session, admin, kubectl, root);
  // An update keeps the Secret's uid: a restored one has a new uid.
  await showRestore(session, admin, kubectl, secret);
  await showGarbageCollection(session, admin, kubectl);
  step('done');
}

/**
 * `secrets-store-csi demo-sync`: the SecretSync controller against a local control plane
 * from the test peers (demo-sync-cluster.ts), with the file provider; shows a Secret
 * appear, follow its source, come back after a delete, and go with its SecretSync. Then
 * it cleans up, also after a failure or a signal (DemoSession).
 */
export async function runDemoSync(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) {
    process.stdout.write(DEMO_SYNC_HELP);
    return;
  }
  const flags = parseFlags(argv, {});
  if (flags.positionals.length > 0) throw new Error(`demo-sync takes no arguments, got "${flags.positionals[0]}"`);
  const peers = findKubePeers();
  process.stdout.on('error', () => undefined);
  const session = await DemoSession.open();
  let failure: unknown;
  try {
    await showSteps(session, peers);
  } catch (err) {
    failure = err;
  }
  await session.close(async () => undefined);
  if (failure !== undefined) throw failure;
}
