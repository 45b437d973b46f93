import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mountPointsUnder } from '../../../driver/mount/mountinfo.js';

const line = (id: number, mountPoint: string, fs = 'tmpfs') =>
  `${id} 1 0:${id} / ${mountPoint} rw,nosuid,nodev - ${fs} ${fs} rw`;

describe('mountPointsUnder (what the demo and test cleanup unmount)', () => {
  const text = [
    line(20, '/'),
    line(21, '/tmp', 'tmpfs'),
    line(30, '/tmp/ssc-demo-a/pods/p/volumes/secrets-store'),
    line(31, '/tmp/ssc-demo-a/pods/p/volumes/secrets-store/inner'),
    line(32, '/tmp/ssc-demo-ab/vol'),
    line(33, '/tmp/ssc-demo-a\\040x/vol'),
  ].join('\n');
  const cases: [string, string[]][] = [
    [
      '/tmp/ssc-demo-a',
      ['/tmp/ssc-demo-a/pods/p/volumes/secrets-store/inner', '/tmp/ssc-demo-a/pods/p/volumes/secrets-store'],
    ],
    ['/tmp/ssc-demo-a x', ['/tmp/ssc-demo-a x/vol']],
    ['/tmp/ssc-demo-none', []],
  ];
  for (const [dir, mounts] of cases) {
    it(`${dir}: only mounts inside it, deepest first`, () => expect(mountPointsUnder(text, dir)).to.deep.equal(mounts));
  }
});

describe('DemoSession.close after a signal, with a step whose work never settles', () => {
  // A step stopped by a signal may wait on something that never settles and holds no
  // handle (a log wait on a driver already gone). close() used to race it against an
  // unref'd timer, so Node found nothing left to run and exited 0 in the middle of
  // close(): no DemoInterrupted (exit 143), temp dir left behind.
  it('finishes: removes its dir and throws DemoInterrupted', async () => {
    const script = `
      import { DemoSession } from ${JSON.stringify(new URL('../../../bin/demo-session.js', import.meta.url).href)};
      import { existsSync } from 'node:fs';
      const session = await DemoSession.open({ inflightGraceMs: 200 });
      // Held until the signal arrives, as the demo's children hold it; gone before close().
      const hold = setInterval(() => undefined, 1000);
      const stopped = session.step(new Promise(() => {})).catch(() => undefined);
      process.kill(process.pid, 'SIGTERM');
      await stopped;
      clearInterval(hold);
      try { await session.close(async () => undefined); console.log('closed without error'); }
      catch (err) { console.log(err.constructor.name, err.exitCode, existsSync(session.work) ? 'dir left' : 'dir removed'); }
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect([r.status, r.stdout.trim()]).to.deep.equal([0, 'DemoInterrupted 143 dir removed']);
  });
});
