import { randomUUID } from 'node:crypto';
import { cp, lstat, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags } from '../proto/runtime/flags.js';
import { untilLogged, type Child } from './child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from './csi-client.js';
import { DemoSession } from './demo-session.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/local/', import.meta.url));
const SPC_NAME = 'demo-secrets';
const VOLUME_ID = 'demo-volume';

/** `secrets-store-csi demo --help`. */
export const DEMO_HELP = `secrets-store-csi demo

Runs the file provider and the driver (local mode, examples/local) as child processes on
sockets in a new temporary directory, publishes the class ${SPC_NAME} like kubelet, shows
the files, modes and .metadata, changes a secret and waits for the rotation reconciler,
then unpublishes and deletes everything. It takes no flags. As root it mounts a tmpfs,
otherwise it uses --mount-mode=dir. Ctrl-C or SIGTERM stops it at any point; it still
unmounts, stops both processes and deletes the directory (exit code 130 or 143).
`;

function step(text: string): void {
  process.stdout.write(`\n==> ${text}\n`);
}

function line(text: string): void {
  process.stdout.write(`    ${text}\n`);
}

/** Lists a volume the way `ls -lR` would, with link targets and octal modes. */
async function showTree(dir: string, rel = ''): Promise<void> {
  for (const name of (await readdir(join(dir, rel))).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const s = await lstat(join(dir, path));
    const mode = (s.mode & 0o777).toString(8).padStart(4, '0');
    if (s.isSymbolicLink()) line(`${mode}  ${path} -> ${await readlink(join(dir, path))}`);
    else if (s.isDirectory()) { line(`${mode}  ${path}/`); if (path.startsWith('..')) await showTree(dir, path); }
    else line(`${mode}  ${path}  (${s.size} bytes)`);
  }
}

async function showVersions(target: string): Promise<void> {
  const doc = JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as { objects: { id: string; version: string }[]; writeTime: string };
  for (const o of doc.objects) line(`${o.id.padEnd(14)} version ${o.version.slice(0, 16)}…`);
  line(`written at ${doc.writeTime}`);
}

/** The demo's steps; every wait goes through session.step so a signal ends it at once. */
async function showSteps(session: DemoSession, client: CsiClient, target: string): Promise<void> {
  const { work } = session;
  const mountMode = process.getuid?.() === 0 ? 'tmpfs' : 'dir';
  step(`working in ${work} (mount mode: ${mountMode}${mountMode === 'dir' ? ', not root: no tmpfs' : ''})`);
  await session.step(cp(join(EXAMPLES, 'secrets'), join(work, 'secrets'), { recursive: true }));

  step('starting the file provider');
  await session.start(['provider', 'file', `--endpoint=unix://${join(work, 'providers', 'file.sock')}`, `--root=${join(work, 'secrets')}`, `--hmac-key-file=${join(work, 'hmac.key')}`], /provider started/);
  line(`serving ${join(work, 'providers', 'file.sock')}`);

  step('starting the driver in local mode');
  const driver: Child = await session.start(['driver', `--endpoint=unix://${join(work, 'csi.sock')}`, '--nodeid=demo-node', `--provider-volume=${join(work, 'providers')}`,
    '--additional-provider-volume-paths=', `--spc-dir=${EXAMPLES}`, `--mount-mode=${mountMode}`, '--metrics-addr=127.0.0.1:0',
    '--enable-secret-rotation', '--rotation-poll-interval=2s'], /driver started/);
  const metricsPort = Number(/"metricsPort":(\d+)/.exec(driver.stderr())?.[1]);
  const info = await session.step(client.pluginInfo());
  line(`${info.name} ${info.vendor_version}, Probe ready: ${await session.step(client.probe())}`);

  step(`NodePublishVolume for pod default/demo-pod, SecretProviderClass ${SPC_NAME}`);
  const ctx = inlineVolumeContext({ name: 'demo-pod', namespace: 'default', uid: randomUUID(), serviceAccountName: 'default' }, SPC_NAME);
  const started = performance.now();
  await session.step(client.publish(inlinePublishRequest(VOLUME_ID, target, ctx)));
  line(`published in ${(performance.now() - started).toFixed(1)} ms at ${target}`);
  await session.step(showTree(target));

  step('what the pod reads');
  for (const file of ['db-password', 'api/token', 'config.json']) line(`${file}: ${JSON.stringify((await session.step(readFile(join(target, file), 'utf8'))).slice(0, 40))}`);
  step('.metadata/versions.json (HMAC versions: they never reveal the content)');
  await session.step(showVersions(target));

  step('the secret changes in the store; the rotation reconciler (every 2s) picks it up');
  const before = await session.step(readlink(join(target, '..data')));
  await session.step(writeFile(join(work, 'secrets', 'db', 'password'), 'demo-db-password-2\n'));
  const rotatedAt = performance.now();
  await session.step(untilLogged(driver, /"message":"volume rotated"/));
  line(`rotated after ${((performance.now() - rotatedAt) / 1000).toFixed(1)} s, without a republish`);
  line(`db-password now: ${JSON.stringify(await session.step(readFile(join(target, 'db-password'), 'utf8')))}`);
  line(`..data: ${before} -> ${await session.step(readlink(join(target, '..data')))} (swapped atomically)`);
  await session.step(showVersions(target));
  const metrics = await session.step(fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()));
  for (const m of metrics.split('\n').filter((l) => /^(rotation_reconcile_total|node_publish_total)\{/.test(l))) line(m);

  step('NodeUnpublishVolume');
  await session.step(client.unpublish(VOLUME_ID, target));
  line(`target path removed: ${await lstat(target).then(() => false, () => true)}`);
  step('done');
}

/**
 * `secrets-store-csi demo`: starts the file provider and the driver (local mode) as real
 * processes on temp sockets, publishes a volume from examples/local like kubelet, shows
 * the files, modes and .metadata, changes a secret and lets the rotation reconciler
 * pick it up, then cleans up, also after a failure or a signal (DemoSession).
 */
export async function runDemo(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help')) { process.stdout.write(DEMO_HELP); return; }
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
      await client.unpublish(VOLUME_ID, target, 5000);
    } finally {
      client.close();
    }
  });
  if (failure !== undefined) throw failure;
}
