import { expect } from 'chai';
import { boundedAll } from '../../../../providers/framework/bounded-all.js';

describe("vault boundedAll (a Mount's Vault calls, a few at a time)", () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('never runs more than the limit at once, and keeps the results in order', async () => {
    let running = 0;
    let most = 0;
    const out = await boundedAll(
      Array.from({ length: 50 }, (_, i) => i),
      8,
      async (i) => {
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
        return i * 2;
      },
    );
    expect(most).to.equal(8);
    expect(out).to.deep.equal(Array.from({ length: 50 }, (_, i) => i * 2));
  });

  it('the first failure aborts the calls still running and starts no more', async () => {
    const started: number[] = [];
    const aborted: number[] = [];
    const failure = new Error('object 3 failed');
    const result = boundedAll(
      Array.from({ length: 100 }, (_, i) => i),
      4,
      (i, signal) => {
        started.push(i);
        if (i === 3) return Promise.reject(failure);
        return new Promise<number>((_resolve, reject) => {
          signal.addEventListener(
            'abort',
            () => {
              aborted.push(i);
              reject(signal.reason);
            },
            { once: true },
          );
        });
      },
    );
    let caught: unknown;
    await result.catch((err: unknown) => {
      caught = err;
    });
    expect(caught).to.equal(failure);
    expect(started).to.deep.equal([0, 1, 2, 3]);
    expect(aborted.sort()).to.deep.equal([0, 1, 2]);
  });

  it('the parent signal aborting stops it', async () => {
    const parent = new AbortController();
    const result = boundedAll(
      [1, 2, 3],
      2,
      (_i, signal) =>
        new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      parent.signal,
    );
    parent.abort(new Error('cancelled'));
    let caught: unknown;
    await result.catch((err: unknown) => {
      caught = err;
    });
    expect((caught as Error).message).to.equal('cancelled');
  });
});
