import { randomUUID } from 'node:crypto';
import { cp, lstat, mkdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags } from '../lib/flags.js';
import { untilLogged, type Child } from './child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from './csi-client.js';
import { locateBao, NO_BAO_LINE } from './demo-bao.js';
import { line, showContents, showTree, showVersions, step } from './demo-output.js';
import { DemoSession } from './demo-session.js';
import { showVaultSteps, VAULT_VOLUME_ID } from './demo-vault.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/local/', import.meta.url));
const SPC_NAME = 'demo-secrets';
const VOLUME_ID = 'demo-volume';

/** The vault part's target path (a pod of its own). */
function vaultTarget(work: string): string {
  return join(work, 'pods', 'vault-pod', 'volumes', 'secrets-store');
}

/** `secrets-store-csi demo --help`. */
export const DEMO_HELP = `secrets-store-csi demo

Runs the file provider and the driver (local mode, the classes of examples/local) as child
processes on sockets in a new temporary directory, publishes the class ${SPC_NAME} like
kubelet, shows the files, modes and .metadata, changes a secret and waits for the rotation
reconciler, then unpublishes. When OpenBao's bao is installed (the test peers' BAO from
bash test/peers/install.sh openbao, else bao on PATH) it then starts a throwaway
bao server -dev with JWT auth and the vault provider, publishes the class demo-vault and
shows its files; without bao it says so in one line. Then it deletes everything. It takes
no flags. As root it mounts a tmpfs, otherwise it uses --mount-mode=dir. Ctrl-C, SIGTERM or a closed terminal (SIGHUP)
stops it at any point; it still unmounts, stops every process it started and deletes the
directory (exit code 130, 143 or 129).
`;

/** Copies the example secrets and classes into the demo's directory, then starts the file provider and the driver. */
async function startProcesses(session: DemoSession, mountMode: 'tmpfs' | 'dir'): Promise<Child> {
  const { work } = session;
  await session.step(cp(join(EXAMPLES, 'secrets'), join(work, 'secrets'), { recursive: true }));
  // The driver reads a copy of the classes: the vault part adds its class there.
  await session.step(mkdir(join(work, 'classes')));
  await session.step(cp(join(EXAMPLES, 'secretproviderclass.yaml'), join(work, 'classes', 'secretproviderclass.yaml')));

  step('starting the file provider');
  const socket = join(work, 'providers', 'file.sock');
  const provider = ['provider', 'file', `--endpoint=unix://${socket}`, `--root=${join(work, 'secrets')}`];
  await session.start([...provider, `--hmac-key-file=${join(work, 'hmac.key')}`], /provider started/);
  line(`serving ${socket}`);

  step('starting the driver in local mode');
  return session.start(
    [
      'driver',
      `--endpoint=unix://${join(work, 'csi.sock')}`,
      '--nodeid=demo-node',
      `--provider-volume=${join(work, 'providers')}`,
      '--additional-provider-volume-paths=',
      `--spc-dir=${join(work, 'classes')}`,
      `--mount-mode=${mountMode}`,
      '--metrics-addr=127.0.0.1:0',
      '--enable-secret-rotation',
      '--rotation-poll-interval=2s',
    ],
    /driver started/,
  );
}

/** Changes a secret in the store and shows the rotation reconciler swapping it in. */
async function showRotation(session: DemoSession, driver: Child, target: string): Promise<void> {
  step('the secret changes in the store; the rotation reconciler (every 2s) picks it up');
  const before = await session.step(readlink(join(target, '..data')));
  await session.step(writeFile(join(session.work, 'secrets', 'db', 'password'), 'demo-db-password-2\n'));
  const rotatedAt = performance.now();
  await session.step(untilLogged(driver, /"message":"volume rotated"/));
  line(`rotated after ${((performance.now() - rotatedAt) / 1000).toFixed(1)} s, without a republish`);
  line(`db-password now: ${JSON.stringify(await session.step(readFile(join(target, 'db-password'), 'utf8')))}`);
  line(`..data: ${before} -> ${await session.step(readlink(join(target, '..data')))} (swapped atomically)`);
  await session.step(showVersions(target));
  const metricsPort = Number(/"metricsPort":(\d+)/.exec(driver.stderr())?.[1]);
  const metrics = await session.step(fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()));
  for (const m of metrics.split('\n').filter((l) => /^(rotation_reconcile_total|node_publish_total)\{/.test(l)))
    line(m);
}

/** The demo's steps; every wait goes through session.step so a signal ends it at once. */
async function showSteps(session: DemoSession, client: CsiClient, target: string): Promise<void> {
  const { work } = session;
  const mountMode = process.getuid?.() === 0 ? 'tmpfs' : 'dir';
  step(`working in ${work} (mount mode: ${mountMode}${mountMode === 'dir' ? ', not root: no tmpfs' : ''})`);
  const driver = await startProcesses(session, mountMode);
  const info = await session.step(client.pluginInfo());
  line(`${info.name} ${info.vendor_version}, Probe ready: ${await session.step(client.probe())}`);

  step(`NodePublishVolume for pod default/demo-pod, SecretProviderClass ${SPC_NAME}`);
  const pod = { name: 'demo-pod', namespace: 'default', uid: randomUUID(), serviceAccountName: 'default' };
  const started = performance.now();
  await session.step(client.publish(inlinePublishRequest(VOLUME_ID, target, inlineVolumeContext(pod, SPC_NAME))));
  line(`published in ${(performance.now() - started).toFixed(1)} ms at ${target}`);
  await session.step(showTree(target));

  step('what the pod reads');
  await session.step(showContents(target, ['db-password', 'api/token', 'config.json']));
  step('.metadata/versions.json (HMAC versions: they never reveal the content)');
  await session.step(showVersions(target));
  await showRotation(session, driver, target);

  step('NodeUnpublishVolume');
  await session.step(client.unpublish(VOLUME_ID, target));
  const removed = await lstat(target).then(
    () => false,
    () => true,
  );
  line(`target path removed: ${removed}`);

  const bao = locateBao();
  if (bao) {
    const paths = {
      classesDir: join(work, 'classes'),
      providersDir: join(work, 'providers'),
      target: vaultTarget(work),
    };
    await showVaultSteps(session, client, bao, paths);
  } else step(NO_BAO_LINE);
  step('done');
}

/**
 * `secrets-store-csi demo`: starts the file provider and the driver (local mode) as real
 * processes on temp sockets, publishes a volume from examples/local like kubelet, shows
 * the files, modes and .metadata, changes a secret and lets the rotation reconciler
 * pick it up; with `bao` installed, the vault provider against a throwaway OpenBao too
 * (demo-vault.ts). Then it cleans up, also after a failure or a signal (DemoSession).
 */
export async function runDemo(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) {
    process.stdout.write(DEMO_HELP);
    return;
  }
  const flags = parseFlags(argv, {});
  if (flags.positionals.length > 0) throw new Error(`demo takes no arguments, got "${flags.positionals[0]}"`);
  // `demo | head` closes stdout early: keep going quietly so the cleanup below still runs.
  process.stdout.on('error', () => undefined);
  const session = await DemoSession.open();
  const client = new CsiClient(join(session.work, 'csi.sock'));
  const target = join(session.work, 'pods', 'demo-pod', 'volumes', 'secrets-store');
  let failure: unknown;
  try {
    await showSteps(session, client, target);
  } catch (err) {
    failure = err;
  }
  // A volume the driver mounted is unpublished through it first (a no-op when none was).
  await session.close(async () => {
    try {
      await client.unpublish(VOLUME_ID, target, 5000).catch(() => undefined);
      await client.unpublish(VAULT_VOLUME_ID, vaultTarget(session.work), 5000);
    } finally {
      client.close();
    }
  });
  if (failure !== undefined) throw failure;
}
