import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interrupt, removeWorkDir } from '../../../bench/run-control.js';

describe('bench/run-control: a benchmark’s Ctrl-C and work directory', () => {
  it('turns SIGINT or SIGTERM into an abort while listening, and gives the signal back on release', () => {
    // Not the process's own signals: other suites' SIGINT handlers would act on them.
    const signals = new EventEmitter();
    const interrupt = new Interrupt(signals);
    interrupt.listen();
    expect([signals.listenerCount('SIGINT'), signals.listenerCount('SIGTERM')]).to.deep.equal([1, 1]);
    expect(() => interrupt.check()).not.to.throw();
    signals.emit('SIGTERM');
    expect(interrupt.signal.aborted).to.equal(true);
    expect(() => interrupt.check()).to.throw('interrupted');
    interrupt.release();
    expect([signals.listenerCount('SIGINT'), signals.listenerCount('SIGTERM')]).to.deep.equal([0, 0]);
  });

  it('removes the work directory, saying nothing when nothing was left mounted', async () => {
    const work = await mkdtemp(join(tmpdir(), 'ssc-run-control-'));
    await writeFile(join(work, 'file'), 'x');
    const lines: string[] = [];
    await removeWorkDir(work, (line) => lines.push(line));
    expect(lines).to.deep.equal([]);
    const gone = await stat(work).then(
      () => false,
      (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
    );
    expect(gone).to.equal(true);
  });
});
