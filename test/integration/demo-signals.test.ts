import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { spawnCli, runCli } from '../support/cli-run.js';
import { mountsUnder, unmountAllUnder } from '../support/driver-stack.js';

/** Pids of processes whose command line mentions `text` (the demo's children name its temp dir). */
async function processesMentioning(text: string): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) pids.push(Number(name));
  }
  return pids;
}

// The demo's step lines, in order; a signal is sent as soon as one is printed.
const STEPS = [
  'working in', 'starting the file provider', 'starting the driver in local mode', 'NodePublishVolume',
  'what the pod reads', 'the secret changes in the store', 'NodeUnpublishVolume', 'done',
];
const SIGTERM_AT = new Set(['working in', 'starting the file provider', 'starting the driver in local mode', 'NodePublishVolume', 'the secret changes in the store']);

// Issue 9 item 14: Ctrl-C during the rotation step left the tmpfs holding the demo's
// secrets mounted; SIGTERM while starting left a socket dir behind.
describe('demo stopped by a signal at any step leaves nothing behind', function () {
  let work: string | undefined;
  afterEach(async () => {
    if (!work) return;
    for (const pid of await processesMentioning(work)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await unmountAllUnder(work);
    await rm(work, { recursive: true, force: true });
    work = undefined;
  });

  const cases = [
    ...STEPS.map((s) => ({ step: s, signal: 'SIGINT' as const, how: 'Ctrl-C (SIGINT to its process group)' })),
    ...STEPS.filter((s) => SIGTERM_AT.has(s)).map((s) => ({ step: s, signal: 'SIGTERM' as const, how: 'SIGTERM to the demo' })),
  ];
  for (const c of cases) {
    it(`${c.how} after "==> ${c.step}"`, async () => {
      // Its own process group, like a shell job: a terminal's Ctrl-C reaches the demo and its children.
      const demo = spawnCli(['demo'], { detached: true });
      await demo.until('stdout', /==> working in (\S+)/);
      work = /==> working in (\S+)/.exec(demo.stdout())?.[1];
      await demo.until('stdout', new RegExp(`==> ${c.step}`));
      const pid = demo.process.pid as number;
      if (c.signal === 'SIGINT') process.kill(-pid, 'SIGINT');
      else process.kill(pid, 'SIGTERM');
      const code = await demo.exited;
      if (c.step === 'done' && code === 0) { /* the signal came after the demo's own cleanup */ } else {
        expect(code, demo.stderr()).to.equal(c.signal === 'SIGINT' ? 130 : 143);
        expect(demo.stderr()).to.include(`secrets-store-csi: demo stopped by ${c.signal}; cleaned up`);
      }
      expect(work).to.be.a('string');
      expect(await mountsUnder(work as string), 'mounts left').to.deep.equal([]);
      expect(existsSync(work as string), 'temp dir left').to.equal(false);
      expect(await processesMentioning(work as string), 'processes left').to.deep.equal([]);
    });
  }
});

describe('CLI help', function () {
  const cases: [string[], RegExp][] = [
    [['--help'], /^usage: secrets-store-csi <command> \[flags\]\n/], [['-h'], /^usage: secrets-store-csi <command>/], [['help'], /^usage: secrets-store-csi <command>/],
    [['driver', '--help'], /^secrets-store-csi driver \[flags\]\n  --endpoint=VALUE/], [['driver', '-h'], /^secrets-store-csi driver \[flags\]\n/],
    [['provider', '--help'], /^usage: secrets-store-csi provider <name> \[flags\]\n\nproviders: file, vault\n/], [['provider', '-h'], /^usage: secrets-store-csi provider <name>/],
    [['provider', 'file', '--help'], /^secrets-store-csi provider file \[flags\]\n(.|\n)*--root=VALUE/], [['provider', 'file', '-h'], /^secrets-store-csi provider file \[flags\]\n/],
    [['publish', '-h'], /^secrets-store-csi publish \[flags\]\n(.|\n)*--secret-provider-class=VALUE/], [['unpublish', '-h'], /^secrets-store-csi unpublish \[flags\]\n/],
    [['demo', '--help'], /^secrets-store-csi demo\n\nRuns the file provider and the driver/], [['demo', '-h'], /^secrets-store-csi demo\n/],
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
    expect(await runCli(['demo', '--fast'])).to.deep.include({ code: 1, stdout: '', stderr: 'secrets-store-csi: unknown flag --fast\n' });
  });
});
