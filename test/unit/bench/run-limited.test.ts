import { expect } from 'chai';
import { runLimited } from '../../../bench/rounds.js';

describe('bench/rounds runLimited: a bounded pool that stops at the first failure', () => {
  it('takes no new item after a failure, lets the ones under way finish, then throws the failure', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    let releaseSlow = (): void => undefined;
    const slow = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const run = runLimited([0, 1, 2, 3, 4], 2, async (i) => {
      started.push(i);
      if (i === 0) await slow;
      if (i === 1) throw new Error('item 1 failed');
      finished.push(i);
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started, 'item 1 failed while item 0 was under way').to.deep.equal([0, 1]);
    releaseSlow();
    let thrown: unknown;
    await run.catch((err: unknown) => {
      thrown = err;
    });
    expect((thrown as Error).message).to.equal('item 1 failed');
    expect([started, finished], 'item 0 finished; 2, 3, 4 never started').to.deep.equal([[0, 1], [0]]);
  });

  it('runs every item, at most `limit` at once, when none fails', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await runLimited([1, 2, 3, 4, 5], 2, async (i) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      done.push(i);
    });
    expect([done.sort(), most]).to.deep.equal([[1, 2, 3, 4, 5], 2]);
  });
});
