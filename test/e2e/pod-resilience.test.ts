import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged, untilLogged } from '../../bin/child-process.js';
import { E2E_IMAGE } from '../support/e2e-image.js';
import { skipUnlessE2eCapable, startE2eNode, type E2eNode } from '../support/e2e-node.js';
import { containerLog, csiPod, READ_LOOP, runPod, volumeTarget, writeProviderFile } from '../support/e2e-pods.js';
import { createNamespace } from '../support/kube-cluster.js';
import { createSecretProviderClass } from '../support/kube-objects.js';
import { podEvents } from '../support/rbac-scenario.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { until } from '../support/until.js';

// Through a real kubelet and containerd: the driver restarted
// (a rollout, then a crash) while a pod runs, and pods that start while their provider is
// down or their SecretProviderClass does not exist yet.

const ROTATION_S = 2;
const ROUND_DONE = /"message":"rotation round done"/;
/** A round that refreshed volumes and changed none (log keys are in alphabetical order). */
const UNCHANGED_ROUND = /"changed":0,[^\n]*"failed":0,[^\n]*"message":"rotation round done","refreshed":[1-9]/;

/** What identifies the mounted volume and its last write: the mount's id, the files' inodes and mtimes, `..data`'s target. */
interface VolumeIdentity {
  mounts: string;
  password: string;
  versions: string;
  data: string;
}
async function volumeIdentity(target: string): Promise<VolumeIdentity> {
  const line = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.split(' ')[4] === target);
  const file = await stat(join(target, 'password'));
  const versions = await stat(join(target, '.metadata', 'versions.json'));
  return {
    mounts: line.map((l) => l.split(' ')[0]).join(','),
    password: `${file.ino}@${file.mtimeMs}`,
    versions: `${versions.ino}@${versions.mtimeMs}`,
    data: await readlink(join(target, '..data')),
  };
}

/** Waits for a Warning event of `reason` on the pod whose message includes `text`; resolves with the event. */
async function untilWarning(node: E2eNode, ns: string, pod: string, reason: string, text: string): Promise<string> {
  return (
    await until(
      `a ${reason} event on ${ns}/${pod} naming "${text}"`,
      async () =>
        (await podEvents(node.cluster, ns, pod)).find((e) => e.startsWith(`Warning ${reason}:`) && e.includes(text)),
      60_000,
    )
  ).value;
}

/** Creates the pod without waiting; resolves with its uid. */
async function createPod(node: E2eNode, ns: string, name: string, spc: string): Promise<string> {
  const created = await node.cluster.admin.core.createNamespacedPod({
    namespace: ns,
    body: csiPod(node, name, spc, READ_LOOP, E2E_IMAGE),
  });
  return created.metadata?.uid ?? '';
}

async function podPhase(node: E2eNode, ns: string, name: string): Promise<string | undefined> {
  return (await node.cluster.admin.core.readNamespacedPod({ namespace: ns, name })).status?.phase;
}

/**
 * A provider that crashed: a process listened on `<socket>` and was killed, so the socket
 * file is left behind with nobody accepting on it (connections are refused).
 */
async function leaveStaleSocket(socket: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => process.stdout.write('listening\\n'))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the socket holder exited with ${code}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  if (!existsSync(socket)) throw new Error(`${socket} vanished with its process: cannot stage a crashed provider`);
}

describe('end to end: driver restarts, a provider down and a class missing at pod start', function () {
  this.timeout(300_000);
  let node: E2eNode;
  const providers: ScriptedProvider[] = [];

  before(async function () {
    await skipUnlessE2eCapable(this);
    node = await startE2eNode({ driverArgs: ['--enable-secret-rotation', `--rotation-poll-interval=${ROTATION_S}s`] });
  });
  after(async () => {
    for (const p of providers) await p.stop();
    await node?.stop();
  });

  it("keeps a running pod's volume through a driver rollout and a crash: files stay, nothing is remounted or rewritten, rotation goes on", async () => {
    const { cluster } = node;
    const ns = await createNamespace(cluster, 'e2e-restart');
    await writeProviderFile(node, 'restart/password', 'before-restart');
    await createSecretProviderClass(cluster, ns, 'restart', {
      provider: 'file',
      parameters: { objects: '- objectName: password\n  sourcePath: restart/password\n' },
    });
    const uid = await runPod(node, ns, csiPod(node, 'survivor', 'restart', READ_LOOP, E2E_IMAGE));
    await until(
      'the container to print the first value',
      async () => (await containerLog(node, ns, 'survivor', uid, 'app')).includes('file=before-restart'),
      30_000,
    );
    const target = volumeTarget(node, uid, 'secrets');
    await untilLogged(node.stack.driver, UNCHANGED_ROUND);
    const identity = await volumeIdentity(target);
    expect(identity.mounts.split(','), 'one mount on the target').to.have.length(1);

    let value = 'before-restart';
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const stack = await node.restartDriver(signal);
      // The new driver finds the volume (from its pod status object) and refreshes it: the provider reports the same versions, nothing is written.
      await untilLogged(stack.driver, UNCHANGED_ROUND, 2);
      expect(await volumeIdentity(target), `after ${signal}: same mount, same files, same ..data`).to.deep.equal(
        identity,
      );
      expect(stack.driver.stderr(), `after ${signal}: no publish reached the new driver`).to.not.match(
        /"message":"(volume published|NodePublishVolume failed)"/,
      );
      expect(await podPhase(node, ns, 'survivor')).to.equal('Running');
      const lines = (await containerLog(node, ns, 'survivor', uid, 'app'))
        .split('\n')
        .filter((l) => l.startsWith('file='));
      expect(lines.at(-1), `after ${signal}: the container still reads the file`).to.equal(`file=${value}`);
      expect(
        lines.every((l) => l === 'file=before-restart'),
        `after ${signal}: the container never read anything else`,
      ).to.equal(true);
    }

    // Rotation goes on under the restarted driver: the same container sees the new value.
    value = 'after-restart';
    const rounds = countLogged(node.stack.driver, ROUND_DONE);
    await writeProviderFile(node, 'restart/password', value);
    await until(
      'the running container to print the rotated value',
      async () => (await containerLog(node, ns, 'survivor', uid, 'app')).includes(`file=${value}`),
      30_000,
    );
    expect(countLogged(node.stack.driver, ROUND_DONE)).to.be.greaterThan(rounds);
    const rotated = await volumeIdentity(target);
    expect(rotated.mounts, 'rotation writes into the same mount').to.equal(identity.mounts);
    expect(rotated.data, 'rotation swapped ..data').to.not.equal(identity.data);
    await until(
      'the MountRotationComplete event',
      async () => (await podEvents(cluster, ns, 'survivor')).some((e) => e.startsWith('Normal MountRotationComplete')),
      30_000,
    );
  });

  it('holds a pod whose provider is down (never started, or crashed) with an event naming it; the pod starts by itself once the provider serves', async () => {
    const { cluster } = node;
    const ns = await createNamespace(cluster, 'e2e-down');
    const providersDir = node.stack.providersDir;
    const absentSocket = join(providersDir, 'late.sock');
    const staleSocket = join(providersDir, 'crashed.sock');
    await leaveStaleSocket(staleSocket);
    await createSecretProviderClass(cluster, ns, 'late', { provider: 'late', parameters: {} });
    await createSecretProviderClass(cluster, ns, 'crashed', { provider: 'crashed', parameters: {} });
    const lateUid = await createPod(node, ns, 'waits-for-late', 'late');
    const crashedUid = await createPod(node, ns, 'waits-for-crashed', 'crashed');

    // Ours (MountFailed) and kubelet's (FailedMount, the gRPC status it got) name the provider and its socket.
    for (const reason of ['MountFailed', 'FailedMount']) {
      await untilWarning(
        node,
        ns,
        'waits-for-late',
        reason,
        `provider "late" is not running on this node: no socket at ${absentSocket}`,
      );
      await untilWarning(
        node,
        ns,
        'waits-for-crashed',
        reason,
        `provider "crashed" Mount unavailable (socket ${staleSocket})`,
      );
    }
    expect(await podPhase(node, ns, 'waits-for-late')).to.equal('Pending');
    expect(await podPhase(node, ns, 'waits-for-crashed')).to.equal('Pending');

    const back = Date.now();
    for (const name of ['late', 'crashed'])
      providers.push(
        await startScriptedProvider(providersDir, name, async () =>
          responseWith([{ path: 'password', contents: `from-${name}` }]),
        ),
      );
    for (const [pod, uid, name] of [
      ['waits-for-late', lateUid, 'late'],
      ['waits-for-crashed', crashedUid, 'crashed'],
    ] as const) {
      await until(
        `${pod} to run and read its secret`,
        async () =>
          (await podPhase(node, ns, pod)) === 'Running' &&
          (await containerLog(node, ns, pod, uid, 'app')).includes(`file=from-${name}`),
        180_000,
      );
    }
    process.stdout.write(
      `      both pods ran ${Date.now() - back} ms after their providers came back (kubelet's mount retry backoff)\n`,
    );
  });

  it('holds a pod whose SecretProviderClass is missing with an event naming the class; the pod starts once the class is created', async () => {
    const { cluster } = node;
    const ns = await createNamespace(cluster, 'e2e-noclass');
    await writeProviderFile(node, 'later/password', 'class-arrived');
    const uid = await createPod(node, ns, 'waits-for-class', 'later');
    for (const reason of ['MountFailed', 'FailedMount'])
      await untilWarning(node, ns, 'waits-for-class', reason, `SecretProviderClass ${ns}/later not found`);
    expect(await podPhase(node, ns, 'waits-for-class')).to.equal('Pending');

    const created = Date.now();
    await createSecretProviderClass(cluster, ns, 'later', {
      provider: 'file',
      parameters: { objects: '- objectName: password\n  sourcePath: later/password\n' },
    });
    await until(
      'the pod to run and read its secret',
      async () =>
        (await podPhase(node, ns, 'waits-for-class')) === 'Running' &&
        (await containerLog(node, ns, 'waits-for-class', uid, 'app')).includes('file=class-arrived'),
      180_000,
    );
    process.stdout.write(`      the pod ran ${Date.now() - created} ms after its class was created\n`);
  });
});
