import { randomUUID } from 'node:crypto';
import { cp, lstat, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCli, untilLogged, type Child } from './child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from './csi-client.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/local/', import.meta.url));
const SPC_NAME = 'demo-secrets';

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

/**
 * `secrets-store-csi demo`: starts the file provider and the driver (local mode) as real
 * processes on temp sockets, publishes a volume from examples/local like kubelet, shows
 * the files, modes and .metadata, changes a secret and lets the rotation reconciler
 * pick it up, then cleans up.
 */
export async function runDemo(_argv: readonly string[]): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-demo-'));
  const children: Child[] = [];
  const client = new CsiClient(join(work, 'csi.sock'));
  const target = join(work, 'pods', 'demo-pod', 'volumes', 'secrets-store');
  const mountMode = process.getuid?.() === 0 ? 'tmpfs' : 'dir';
  // `demo | head` closes stdout early: keep going quietly so the cleanup below still runs.
  process.stdout.on('error', () => undefined);
  const cleanup = async () => {
    client.close();
    for (const child of children.reverse()) await child.stop();
    children.length = 0;
    await rm(work, { recursive: true, force: true });
  };
  const onSignal = () => { void cleanup().finally(() => process.exit(130)); };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    step(`working in ${work} (mount mode: ${mountMode}${mountMode === 'dir' ? ', not root: no tmpfs' : ''})`);
    await cp(join(EXAMPLES, 'secrets'), join(work, 'secrets'), { recursive: true });

    step('starting the file provider');
    children.push(await startCli(['provider', 'file', `--endpoint=unix://${join(work, 'providers', 'file.sock')}`, `--root=${join(work, 'secrets')}`, `--hmac-key-file=${join(work, 'hmac.key')}`], /provider started/));
    line(`serving ${join(work, 'providers', 'file.sock')}`);

    step('starting the driver in local mode');
    children.push(await startCli(['driver', `--endpoint=unix://${join(work, 'csi.sock')}`, '--nodeid=demo-node', `--provider-volume=${join(work, 'providers')}`,
      '--additional-provider-volume-paths=', `--spc-dir=${EXAMPLES}`, `--mount-mode=${mountMode}`, '--metrics-addr=127.0.0.1:0',
      '--enable-secret-rotation', '--rotation-poll-interval=2s'], /driver started/));
    const driver = children[children.length - 1] as Child;
    const metricsPort = Number(/"metricsPort":(\d+)/.exec(driver.stderr())?.[1]);
    const info = await client.pluginInfo();
    line(`${info.name} ${info.vendor_version}, Probe ready: ${await client.probe()}`);

    step(`NodePublishVolume for pod default/demo-pod, SecretProviderClass ${SPC_NAME}`);
    const ctx = inlineVolumeContext({ name: 'demo-pod', namespace: 'default', uid: randomUUID(), serviceAccountName: 'default' }, SPC_NAME);
    const started = performance.now();
    await client.publish(inlinePublishRequest('demo-volume', target, ctx));
    line(`published in ${(performance.now() - started).toFixed(1)} ms at ${target}`);
    await showTree(target);

    step('what the pod reads');
    for (const file of ['db-password', 'api/token', 'config.json']) line(`${file}: ${JSON.stringify((await readFile(join(target, file), 'utf8')).slice(0, 40))}`);
    step('.metadata/versions.json (HMAC versions: they never reveal the content)');
    await showVersions(target);

    step('the secret changes in the store; the rotation reconciler (every 2s) picks it up');
    const before = await readlink(join(target, '..data'));
    await writeFile(join(work, 'secrets', 'db', 'password'), 'demo-db-password-2\n');
    const rotatedAt = performance.now();
    await untilLogged(driver, /"message":"volume rotated"/);
    line(`rotated after ${((performance.now() - rotatedAt) / 1000).toFixed(1)} s, without a republish`);
    line(`db-password now: ${JSON.stringify(await readFile(join(target, 'db-password'), 'utf8'))}`);
    line(`..data: ${before} -> ${await readlink(join(target, '..data'))} (swapped atomically)`);
    await showVersions(target);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const m of metrics.split('\n').filter((l) => /^(rotation_reconcile_total|node_publish_total)\{/.test(l))) line(m);

    step('NodeUnpublishVolume');
    await client.unpublish('demo-volume', target);
    line(`target path removed: ${await lstat(target).then(() => false, () => true)}`);
    step('done');
  } catch (err) {
    // A failed step must not leave a mount behind: unpublish before the processes stop.
    await client.unpublish('demo-volume', target).catch(() => undefined);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup();
  }
}
