import { expect } from 'chai';
import { nextPollDelay, WorkQueue } from '../../../sync-controller/work-queue.js';

describe('sync-controller WorkQueue and poll jitter', () => {
  it('runs at most `limit` at once, a key never twice at once, and once more when re-added while running', async () => {
    const releases = new Map<string, () => void>();
    const runs: string[] = [];
    let running = 0;
    let most = 0;
    const queue = new WorkQueue(2, (key) => {
      runs.push(key);
      most = Math.max(most, ++running);
      return new Promise<void>((resolve) => releases.set(key, () => (running--, resolve())));
    });
    for (const key of ['a', 'b', 'c', 'a']) queue.add(key);
    expect(runs).to.deep.equal(['a', 'b']);
    queue.add('a');
    releases.get('a')?.();
    await new Promise((r) => setImmediate(r));
    expect(runs).to.deep.equal(['a', 'b', 'c']);
    releases.get('b')?.();
    await new Promise((r) => setImmediate(r));
    expect(runs).to.deep.equal(['a', 'b', 'c', 'a']);
    releases.get('c')?.();
    releases.get('a')?.();
    await queue.stop();
    expect(most).to.equal(2);
  });

  it('holds what is added until release(), once per key', async () => {
    const runs: string[] = [];
    const queue = new WorkQueue(4, (key) => {
      runs.push(key);
      return Promise.resolve();
    });
    queue.hold();
    for (const key of ['a', 'b', 'a']) queue.add(key);
    await new Promise((r) => setImmediate(r));
    expect(runs).to.deep.equal([]);
    queue.release();
    await queue.stop();
    expect(runs).to.deep.equal(['a', 'b']);
  });

  const jitter: [number, number][] = [
    [0, 900],
    [0.5, 1000],
    [0.999, 1100],
  ];
  for (const [random, delay] of jitter)
    it(`poll delay for random ${random}: ${delay} ms of 1000`, () =>
      expect(nextPollDelay(1000, random)).to.be.closeTo(delay, 1));
});
