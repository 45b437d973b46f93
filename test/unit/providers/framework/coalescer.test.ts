import { expect } from 'chai';
import { Coalescer } from '../../../../providers/framework/coalescer.js';
import { deferred, rejection } from '../../../support/deferred.js';

describe('vault Coalescer', () => {
  it('runs one call for concurrent callers of a key and gives each its result', async () => {
    let coalesced = 0;
    const c = new Coalescer<string>(() => {
      coalesced++;
    });
    const login = deferred<string>();
    let calls = 0;
    const fn = () => {
      calls++;
      return login.promise;
    };
    const waiting = [c.coalesce('alice', fn), c.coalesce('alice', fn), c.coalesce('alice', fn)];
    expect(c.inFlight).to.equal(1);
    login.resolve('token');
    expect(await Promise.all(waiting)).to.deep.equal(['token', 'token', 'token']);
    expect([calls, coalesced, c.inFlight]).to.deep.equal([1, 2, 0]);
  });

  it('does not share between keys', async () => {
    const c = new Coalescer<string>();
    const calls: string[] = [];
    const results = await Promise.all(
      ['alice', 'bob', 'alice'].map((k) =>
        c.coalesce(k, async () => {
          calls.push(k);
          return `token of ${k}`;
        }),
      ),
    );
    expect(results).to.deep.equal(['token of alice', 'token of bob', 'token of alice']);
    expect(calls).to.deep.equal(['alice', 'bob']);
  });

  it('gives a failure to every waiting caller and does not remember it', async () => {
    const c = new Coalescer<string>();
    const login = deferred<string>();
    let calls = 0;
    const fn = () => {
      calls++;
      return login.promise;
    };
    const waiting = [c.coalesce('alice', fn), c.coalesce('alice', fn)];
    login.reject(new Error('permission denied'));
    for (const p of waiting) expect(((await rejection(p)) as Error).message).to.equal('permission denied');
    expect(
      await c.coalesce('alice', async () => {
        calls++;
        return 'token';
      }),
    ).to.equal('token');
    expect(calls).to.equal(2);
  });

  it('starts afresh once a call settled (nothing is cached)', async () => {
    const c = new Coalescer<number>();
    let calls = 0;
    await c.coalesce('k', async () => ++calls);
    expect(await c.coalesce('k', async () => ++calls)).to.equal(2);
  });

  it('turns a synchronous throw into a rejection', async () => {
    const c = new Coalescer<number>();
    const err = await rejection(
      c.coalesce('k', () => {
        throw new Error('sync');
      }),
    );
    expect((err as Error).message).to.equal('sync');
    expect(c.inFlight).to.equal(0);
  });

  it('lets a caller give up without cancelling the call the others wait on', async () => {
    const c = new Coalescer<string>();
    const read = deferred<string>();
    let callSignal: AbortSignal | undefined;
    const fn = (signal: AbortSignal) => {
      callSignal = signal;
      return read.promise;
    };
    const first = new AbortController();
    const leaving = c.coalesce('k', fn, first.signal);
    const staying = c.coalesce('k', fn, new AbortController().signal);
    first.abort(new Error('Mount cancelled'));
    expect(((await rejection(leaving)) as Error).message).to.equal('Mount cancelled');
    expect(callSignal?.aborted).to.equal(false);
    read.resolve('data');
    expect(await staying).to.equal('data');
  });

  it('cancels the call when every caller gave up, and the next caller starts a new one', async () => {
    const c = new Coalescer<string>();
    const signals: AbortSignal[] = [];
    // The cancelled call is slow to stop: a caller arriving meanwhile must not join it.
    const stopping = deferred<string>();
    const fn = (signal: AbortSignal) => {
      signals.push(signal);
      return signals.length === 1 ? stopping.promise : Promise.resolve('second');
    };
    const a = new AbortController();
    const b = new AbortController();
    const waits = [c.coalesce('k', fn, a.signal), c.coalesce('k', fn, b.signal)];
    a.abort(new Error('a gave up'));
    expect(signals[0]?.aborted).to.equal(false);
    b.abort(new Error('b gave up'));
    expect(signals[0]?.aborted).to.equal(true);
    expect((await Promise.all(waits.map(rejection))).map((e) => (e as Error).message)).to.deep.equal([
      'a gave up',
      'b gave up',
    ]);
    expect(await c.coalesce('k', fn)).to.equal('second');
    stopping.reject(signals[0]?.reason);
    expect(c.inFlight).to.equal(0);
  });

  it('refuses a caller whose signal has already aborted, without calling', async () => {
    const c = new Coalescer<string>();
    let calls = 0;
    const gone = AbortSignal.abort(new Error('too late'));
    expect(
      (
        (await rejection(
          c.coalesce(
            'k',
            async () => {
              calls++;
              return 'x';
            },
            gone,
          ),
        )) as Error
      ).message,
    ).to.equal('too late');
    expect(calls).to.equal(0);
  });
});
