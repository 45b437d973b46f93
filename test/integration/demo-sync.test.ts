import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesMentioning, runCli, spawnCli } from '../support/cli-run.js';
import { peerBinary } from '../support/peers.js';

// `secrets-store-csi demo-sync` (npm run demo:sync): the SecretSync controller against a
// local etcd + kube-apiserver + kube-controller-manager from the test peers. Run whole, it
// must show each promised effect and leave nothing behind; stopped by a signal at any step
// (also while start-cluster.sh is starting etcd and kube-apiserver, which run detached),
// nothing may be left running or on disk either.

const PEERS = ['ETCD', 'KUBE_APISERVER', 'KUBE_CONTROLLER_MANAGER', 'KUBECTL'];
const MISSING = PEERS.filter((k) => peerBinary(k) === undefined);

const STEPS = [
  'working in',
  'starting etcd and kube-apiserver',
  'kubectl apply: the SecretProviderClass CRD',
  'starting kube-controller-manager',
  'starting the file provider',
  'starting the SecretSync controller',
  'kubectl apply: examples/sync-controller/file/',
  'the Secret sync-file-demo/db appears',
  "the source changes; the class's secrets-store.csi.k8s.io/refresh-requested-at annotation",
  'kubectl delete secret: the controller puts it back',
  'kubectl delete secretsync: the garbage collector deletes its Secret',
  'done',
];

/** The step lines (`==> …`), each cut to the STEPS entry it starts with. */
function stepsOf(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('==> '))
    .map((l) => l.slice(4))
    .map((l) => STEPS.find((k) => l.startsWith(k)) ?? l);
}

/** Fails the test unless `work` is gone and no process names it (etcd, kube-apiserver, the controller, …). */
async function expectNothingLeft(work: string | undefined): Promise<void> {
  expect(work).to.be.a('string');
  expect(existsSync(work as string), 'temp dir left').to.equal(false);
  expect(await processesMentioning(work as string), 'processes left').to.deep.equal([]);
}

describe('demo-sync: the SecretSync controller end to end on a local control plane', function () {
  this.timeout(180_000);
  let work: string | undefined;

  before(function () {
    if (MISSING.length > 0) {
      process.stderr.write(
        `    skipping demo-sync: test peers ${MISSING.join(', ')} missing (bash test/peers/install.sh)\n`,
      );
      this.skip();
    }
  });

  afterEach(async () => {
    if (!work) return;
    for (const pid of await processesMentioning(work)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await rm(work, { recursive: true, force: true });
    work = undefined;
  });

  it('the Secret appears, follows its source on a refresh annotation, comes back after kubectl delete, goes with its SecretSync; nothing left', async () => {
    const run = await runCli(['demo-sync']);
    work = /==> working in (\S+)/.exec(run.stdout)?.[1];
    expect(run.code, run.stderr).to.equal(0);
    expect(stepsOf(run.stdout)).to.deep.equal(STEPS);
    const out = run.stdout;
    // The example's manifests, applied with the kubectl peer; the controller as its ServiceAccount.
    expect(out).to.include(
      '    $ kubectl apply -f deploy/crds/secretproviderclasses.yaml -f deploy/sync-controller/secretsyncs-crd.yaml\n',
    );
    expect(out).to.include('      secretsync.secret-sync.x-k8s.io/db created\n');
    expect(out).to.include('(as the ServiceAccount kube-system/secrets-store-sync-controller)');
    // Created: data from the source Secret's keys, the controller's label, the owner.
    const created = out.slice(out.indexOf('==> the Secret sync-file-demo/db appears'));
    expect(created).to.match(
      /after \d+\.\d s\n {4}type Opaque, owner SecretSync\/db\n {4}labels: \{"app.kubernetes.io\/name":"demo","secrets-store.sync.x-k8s.io":""\}\n {4}password: "demo-db-password-1"\n {4}token: "demo-api-token-1"\n/,
    );
    expect(created).to.match(/\n {6}db +db +True +SecretUpToDate /);
    // The source changed: the Secret follows after the annotation (the poll is 12h).
    expect(out).to.match(/the Secret has it after \d+\.\d s: password "demo-db-password-2"\n/);
    // Deleted: restored, as a new object with the current data.
    const restored = out.slice(out.indexOf('==> kubectl delete secret'));
    expect(restored).to.match(/restored after \d+\.\d s \(a new Secret: uid [0-9a-f]{8}… -> [0-9a-f]{8}…\)/);
    expect(restored).to.include('    password: "demo-db-password-2"\n');
    expect(out).to.match(/the Secret is gone after \d+\.\d s\n/);
    await expectNothingLeft(work);
  });

  const cases = [
    { step: 'starting etcd and kube-apiserver', signal: 'SIGINT' as const },
    { step: 'starting kube-controller-manager', signal: 'SIGINT' as const },
    { step: 'starting the SecretSync controller', signal: 'SIGINT' as const },
    { step: 'the Secret sync-file-demo/db appears', signal: 'SIGINT' as const },
    { step: 'kubectl delete secret', signal: 'SIGINT' as const },
    { step: 'starting etcd and kube-apiserver', signal: 'SIGTERM' as const },
    { step: 'starting the file provider', signal: 'SIGTERM' as const },
    { step: 'kubectl apply: examples/sync-controller/file/', signal: 'SIGHUP' as const },
  ];
  for (const c of cases) {
    it(`${c.signal} ${c.signal === 'SIGTERM' ? 'to the demo' : 'to its process group'} after "==> ${c.step}": exit ${{ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[c.signal]}, nothing left`, async () => {
      // Its own process group, like a shell job: a terminal's Ctrl-C reaches the demo and its children.
      const demo = spawnCli(['demo-sync'], { detached: true });
      await demo.until('stdout', /==> working in (\S+)/);
      work = /==> working in (\S+)/.exec(demo.stdout())?.[1];
      await demo.until('stdout', new RegExp(`==> ${c.step}`));
      const pid = demo.process.pid as number;
      if (c.signal === 'SIGTERM') process.kill(pid, 'SIGTERM');
      else process.kill(-pid, c.signal);
      const code = await demo.exited;
      expect(code, demo.stderr()).to.equal({ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[c.signal]);
      expect(demo.stderr()).to.include(`secrets-store-csi: demo stopped by ${c.signal}; cleaned up`);
      await expectNothingLeft(work);
    });
  }
});

describe('demo-sync without the kube peers', function () {
  this.timeout(30_000);
  let dir: string | undefined;
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('says in one line which peers are missing and how to install them, exits 1, starts and leaves nothing', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-no-peers-'));
    const [cache, tmp] = [join(dir, 'cache'), join(dir, 'tmp')];
    await Promise.all([mkdir(cache), mkdir(tmp)]);
    const run = await runCli(['demo-sync'], { env: { ...process.env, SSC_PEERS_CACHE: cache, TMPDIR: tmp } });
    expect(run).to.deep.equal({
      code: 1,
      stdout: '',
      stderr:
        'secrets-store-csi: demo-sync needs the test peers etcd, kube-apiserver, kube-controller-manager, kubectl, not installed: ' +
        'bash test/peers/install.sh etcd kube-apiserver kube-controller-manager kubectl builds them (needs Go; about 10 minutes the first time)\n',
    });
    expect(await readdir(tmp), 'temp dir made').to.deep.equal([]);
  });

  it('--help describes it and exits 0; an unknown flag is refused', async () => {
    const help = await runCli(['demo-sync', '-h']);
    expect([help.code, help.stderr]).to.deep.equal([0, '']);
    expect(help.stdout).to.match(/^secrets-store-csi demo-sync\n\nRuns the SecretSync controller end to end/);
    expect(help.stdout).to.include('bash test/peers/install.sh etcd\nkube-apiserver kube-controller-manager kubectl');
    expect(await runCli(['demo-sync', '--fast'])).to.deep.include({
      code: 1,
      stdout: '',
      stderr: 'secrets-store-csi: unknown flag --fast\n',
    });
    expect((await runCli(['--help'])).stdout).to.include('  demo-sync           the SecretSync controller');
  });
});
