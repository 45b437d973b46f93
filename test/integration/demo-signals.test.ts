import { expect } from 'chai';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { NO_BAO_LINE } from '../../bin/demo-bao.js';
import { processesMentioning, spawnCli, runCli } from '../support/cli-run.js';
import { mountsUnder, unmountAllUnder } from '../support/driver-stack.js';
import { peerBinary } from '../support/peers.js';

/** The vault part's step lines, printed when the demo finds bao (here: the openbao test peer). */
const VAULT_STEPS = [
  'vault: starting OpenBao',
  'vault: starting the vault provider',
  'vault: NodePublishVolume',
  'vault: what the pod reads',
  'vault: NodeUnpublishVolume',
];
const HAS_BAO = peerBinary('BAO') !== undefined;

// The demo's step lines, in order; a signal is sent as soon as one is printed.
const STEPS = [
  'working in',
  'starting the file provider',
  'starting the driver in local mode',
  'NodePublishVolume',
  'what the pod reads',
  'the secret changes in the store',
  'NodeUnpublishVolume',
  ...(HAS_BAO ? VAULT_STEPS : []),
  'done',
];
const SIGTERM_AT = new Set([
  'working in',
  'starting the file provider',
  'starting the driver in local mode',
  'NodePublishVolume',
  'the secret changes in the store',
  'vault: starting OpenBao',
  'vault: NodePublishVolume',
]);

// Ctrl-C during the rotation step left the tmpfs holding the demo's
// secrets mounted; SIGTERM while starting left a socket dir behind. With the openbao peer
// installed the vault part's steps are covered too: OpenBao and the vault provider must
// go as well (their command lines name the demo's temp dir).
describe('demo stopped by a signal at any step leaves nothing behind', function () {
  let work: string | undefined;
  afterEach(async () => {
    if (!work) return;
    for (const pid of await processesMentioning(work)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await unmountAllUnder(work);
    await rm(work, { recursive: true, force: true });
    work = undefined;
  });

  const cases = [
    ...STEPS.map((s) => ({ step: s, signal: 'SIGINT' as const, how: 'Ctrl-C (SIGINT to its process group)' })),
    ...STEPS.filter((s) => SIGTERM_AT.has(s)).map((s) => ({
      step: s,
      signal: 'SIGTERM' as const,
      how: 'SIGTERM to the demo',
    })),
    ...['NodePublishVolume', 'the secret changes in the store'].map((s) => ({
      step: s,
      signal: 'SIGHUP' as const,
      how: 'the terminal closed (SIGHUP to its process group)',
    })),
  ];
  for (const c of cases) {
    it(`${c.how} after "==> ${c.step}"`, async () => {
      // Its own process group, like a shell job: a terminal's Ctrl-C reaches the demo and its children.
      const demo = spawnCli(['demo'], { detached: true });
      await demo.until('stdout', /==> working in (\S+)/);
      work = /==> working in (\S+)/.exec(demo.stdout())?.[1];
      await demo.until('stdout', new RegExp(`==> ${c.step}`));
      const pid = demo.process.pid as number;
      if (c.signal === 'SIGTERM') process.kill(pid, 'SIGTERM');
      else process.kill(-pid, c.signal);
      const code = await demo.exited;
      if (c.step === 'done' && code === 0) {
        /* the signal came after the demo's own cleanup */
      } else {
        expect(code, demo.stderr()).to.equal({ SIGHUP: 129, SIGINT: 130, SIGTERM: 143 }[c.signal]);
        expect(demo.stderr()).to.include(`secrets-store-csi: demo stopped by ${c.signal}; cleaned up`);
      }
      expect(work).to.be.a('string');
      expect(await mountsUnder(work as string), 'mounts left').to.deep.equal([]);
      expect(existsSync(work as string), 'temp dir left').to.equal(false);
      expect(await processesMentioning(work as string), 'processes left').to.deep.equal([]);
    });
  }
});

/** The demo's step lines (`==> …`), each cut to the STEPS entry it starts with. */
function stepsOf(stdout: string): string[] {
  const known = [...STEPS, ...VAULT_STEPS, '.metadata/versions.json', 'vault: .metadata/versions.json'];
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('==> '))
    .map((l) => l.slice(4))
    .map((l) => known.find((k) => l.startsWith(k)) ?? l);
}

/** $PATH without the directories that hold an executable bao. */
function pathWithoutBao(): string {
  return (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => {
      try {
        accessSync(join(dir, 'bao'), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(delimiter);
}

/** The file provider's part, unchanged by the vault part. */
const FILE_STEPS = [
  'working in',
  'starting the file provider',
  'starting the driver in local mode',
  'NodePublishVolume',
  'what the pod reads',
  '.metadata/versions.json',
  'the secret changes in the store',
  'NodeUnpublishVolume',
];

describe('demo: the vault part with OpenBao, or one line on how to get bao', function () {
  this.timeout(120_000);
  let work: string | undefined;
  afterEach(async () => {
    if (work) await rm(work, { recursive: true, force: true });
    work = undefined;
  });

  it("with the openbao peer: OpenBao, the vault provider, the vault volume's files and versions; no credential printed; nothing left", async function () {
    const bao = peerBinary('BAO');
    if (!bao) {
      process.stderr.write(
        "    skipping the demo's vault part: the openbao peer is not installed (bash test/peers/install.sh openbao)\n",
      );
      this.skip();
    }
    const run = await runCli(['demo']);
    expect(run.code, run.stderr).to.equal(0);
    expect(stepsOf(run.stdout)).to.deep.equal([
      ...FILE_STEPS,
      'vault: starting OpenBao',
      'vault: starting the vault provider',
      'vault: NodePublishVolume',
      'vault: what the pod reads',
      'vault: .metadata/versions.json',
      'vault: NodeUnpublishVolume',
      'done',
    ]);
    expect(run.stdout).to.include(`==> vault: starting OpenBao (bao server -dev, ${bao}, from the test peers)`);
    expect(run.stdout).to.match(/\n {4}0400 {2}\.\.[^/\n]+\/db-password {2}\(21 bytes\)\n/);
    expect(run.stdout).to.match(/\n {4}0777 {2}db\.json -> \.\.data\/db\.json\n/);
    expect(run.stdout).to.include('    db-password: "demo-vault-password-1"\n');
    expect(run.stdout).to.match(/\n {4}db-password +version [0-9a-f]{16}…\n {4}db\.json +version [0-9a-f]{16}…\n/);
    expect(run.stdout.match(/target path removed: true/g)).to.have.length(2);
    // No credential of the demo's OpenBao reaches the terminal: root token, unseal key, the pod's JWT, the signing key.
    for (const text of [run.stdout, run.stderr]) {
      expect(text).not.to.match(/Root Token|Unseal Key|PRIVATE KEY|eyJ[\w-]+\.eyJ/);
    }
    work = /==> working in (\S+)/.exec(run.stdout)?.[1];
    expect(existsSync(work as string), 'temp dir left').to.equal(false);
    expect(await processesMentioning(work as string), 'processes left').to.deep.equal([]);
  });

  it("without bao (no test peer, none on PATH): one line saying how to get it, and the file provider's demo as before", async () => {
    const emptyCache = await mkdtemp(join(tmpdir(), 'ssc-no-peers-'));
    work = emptyCache;
    const run = await runCli(['demo'], {
      env: { ...process.env, SSC_PEERS_CACHE: emptyCache, PATH: pathWithoutBao() },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(stepsOf(run.stdout)).to.deep.equal([...FILE_STEPS, NO_BAO_LINE, 'done']);
    const mentions = run.stdout.split('\n').filter((l) => !l.startsWith('==> working in') && /vault|bao/i.test(l));
    expect(mentions).to.deep.equal([`==> ${NO_BAO_LINE}`]);
    expect(NO_BAO_LINE).to.include('bash test/peers/install.sh openbao');
  });
});

describe('CLI help', function () {
  const cases: [string[], RegExp][] = [
    [['--help'], /^usage: secrets-store-csi <command> \[flags\]\n/],
    [['-h'], /^usage: secrets-store-csi <command>/],
    [['help'], /^usage: secrets-store-csi <command>/],
    [['driver', '--help'], /^secrets-store-csi driver \[flags\]\n {2}--endpoint=VALUE/],
    [['driver', '-h'], /^secrets-store-csi driver \[flags\]\n/],
    [
      ['provider', '--help'],
      /^usage: secrets-store-csi provider <name> \[flags\]\n\nproviders: file, vault, azure, exec, pki\n/,
    ],
    [['provider', '-h'], /^usage: secrets-store-csi provider <name>/],
    [['provider', 'file', '--help'], /^secrets-store-csi provider file \[flags\]\n(.|\n)*--root=VALUE/],
    [['provider', 'file', '-h'], /^secrets-store-csi provider file \[flags\]\n/],
    [['publish', '-h'], /^secrets-store-csi publish \[flags\]\n(.|\n)*--secret-provider-class=VALUE/],
    [['unpublish', '-h'], /^secrets-store-csi unpublish \[flags\]\n/],
    [['demo', '--help'], /^secrets-store-csi demo\n\nRuns the file provider and the driver/],
    [['demo', '-h'], /^secrets-store-csi demo\n/],
  ];
  for (const [args, out] of cases) {
    it(`${args.join(' ')} prints help and exits 0, starting nothing`, async () => {
      const r = await runCli(args);
      expect([r.code, r.stderr]).to.deep.equal([0, '']);
      expect(r.stdout).to.match(out);
      expect(r.stdout).not.to.include('==> working in');
    });
  }

  it('demo refuses flags and arguments it does not take', async () => {
    expect(await runCli(['demo', '--fast'])).to.deep.include({
      code: 1,
      stdout: '',
      stderr: 'secrets-store-csi: unknown flag --fast\n',
    });
  });
});
