import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { idleCpuMsPerSecond, schedstatRunNs, statCpuTicks, threadsCpuMs } from '../../../bench/proc.js';

describe('bench/proc: CPU time of a process', () => {
  it('reads the run time (ns) of a schedstat line', () => {
    expect(schedstatRunNs('358852222 499410 106\n')).to.equal(358852222);
    expect(() => schedstatRunNs('garbage')).to.throw(/cannot read schedstat/);
  });

  it('reads utime/stime/cutime/cstime after a command name with spaces and parentheses', () => {
    const stat = '42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0 5 1000 50';
    expect(statCpuTicks(stat, 42)).to.deep.equal({ utime: 7, stime: 3, cutime: 2, cstime: 1 });
  });

  it('counts a busy loop of this process at sub-tick resolution', async () => {
    const before = await threadsCpuMs(process.pid);
    // 3 ms of this thread's own CPU (not wall time: a busy machine may preempt the loop).
    const start = process.cpuUsage();
    while (((u) => u.user + u.system)(process.cpuUsage(start)) < 3_000) {
      /* spin */
    }
    const spent = (await threadsCpuMs(process.pid)) - before;
    expect(spent).to.be.greaterThan(2.5).and.lessThan(1000);
  });

  it('reads CPU ms per second of a sleeping and of a spinning process over a window', async function () {
    this.timeout(20_000);
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const spinner = spawn(process.execPath, ['-e', 'process.stdout.write("spinning\\n"); for (;;) {}'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      // The window starts once both are past their start-up: the sleeper asleep (state S
      // in /proc/<pid>/stat), the spinner in its loop (it said so).
      await Promise.all([once(sleeper, 'spawn'), once(spinner.stdout!, 'data')]);
      while (!/^\d+ \(sleep\) S /.test(await readFile(`/proc/${sleeper.pid}/stat`, 'utf8')))
        await new Promise((resolve) => setImmediate(resolve));
      const [asleep, spinning] = await idleCpuMsPerSecond([sleeper.pid!, spinner.pid!], 1000);
      expect(asleep).to.be.lessThan(5);
      // One thread spinning: up to 1000 ms per second, less on a machine busy with other work.
      expect(spinning).to.be.greaterThan(50).and.lessThan(1100);
    } finally {
      sleeper.kill('SIGKILL');
      spinner.kill('SIGKILL');
    }
  });
});
