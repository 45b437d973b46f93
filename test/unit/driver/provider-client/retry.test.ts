import { expect } from 'chai';
import { callWithRetry, type RetryPlan } from '../../../../driver/provider-client/retry.js';
import { SscError } from '../../../../lib/errors.js';

const unavailable = () => new SscError('unavailable', 'down');
const isRetryable = (err: unknown) => err instanceof SscError && err.kind === 'unavailable';

/** Runs callWithRetry with a fake sleep; `outcomes[i]` is what attempt i+1 does. */
async function run(
  outcomes: (Error | string)[],
  o: Partial<RetryPlan<string>> = {},
): Promise<{ result: unknown; calls: number; delays: number[] }> {
  const delays: number[] = [];
  let calls = 0;
  const result = await callWithRetry<string>({
    attempts: 10,
    deadline: new Date(Date.now() + 3_600_000),
    isRetryable,
    baseDelayMs: 100,
    sleep: async (ms) => {
      delays.push(ms);
    },
    attempt: async () => {
      const outcome = outcomes[calls++] ?? unavailable();
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    ...o,
  }).catch((err: unknown) => err);
  return { result, calls, delays };
}

describe('callWithRetry', () => {
  it('returns the first success without sleeping', async () => {
    expect(await run(['ok'])).to.deep.equal({ result: 'ok', calls: 1, delays: [] });
  });

  it('retries retryable errors with doubling delays until success', async () => {
    expect(await run([unavailable(), unavailable(), unavailable(), 'ok'])).to.deep.equal({
      result: 'ok',
      calls: 4,
      delays: [100, 200, 400],
    });
  });

  it('uses 100ms as the default first delay', async () => {
    expect((await run([unavailable(), 'ok'], { baseDelayMs: undefined })).delays).to.deep.equal([100]);
  });

  const nonRetryable: SscError[] = [
    new SscError('not-found', 'x'),
    new SscError('deadline-exceeded', 'x'),
    new SscError('internal', 'x'),
  ];
  for (const err of nonRetryable) {
    it(`does not retry ${err.kind}`, async () =>
      expect(await run([err, 'ok'])).to.deep.equal({ result: err, calls: 1, delays: [] }));
  }

  it('stops after the bounded number of attempts and throws the last error', async () => {
    const errs = [unavailable(), unavailable(), unavailable(), unavailable()];
    const r = await run(errs, { attempts: 3 });
    expect(r).to.deep.equal({ result: errs[2], calls: 3, delays: [100, 200] });
    expect(r.result).to.equal(errs[2]);
  });

  it('attempts: 1 means no retry', async () =>
    expect(await run([unavailable(), 'ok'], { attempts: 1 })).to.include({ calls: 1 }));

  it('stops when the next delay would pass the deadline', async () => {
    const r = await run([], { baseDelayMs: 1000, deadline: new Date(Date.now() + 3500) });
    expect(r.calls).to.equal(3);
    expect(r.delays).to.deep.equal([1000, 2000]);
    expect((r.result as SscError).kind).to.equal('unavailable');
  });

  it('does not retry at all when the deadline is already past', async () => {
    expect(await run([unavailable(), 'ok'], { deadline: new Date(Date.now() - 1) })).to.include({ calls: 1 });
  });

  it('stops retrying once the signal aborted, and passes the signal to sleep', async () => {
    const controller = new AbortController();
    const signals: (AbortSignal | undefined)[] = [];
    let calls = 0;
    const result = await callWithRetry<string>({
      attempts: 10,
      deadline: new Date(Date.now() + 3_600_000),
      isRetryable,
      signal: controller.signal,
      sleep: async (_ms, signal) => {
        signals.push(signal);
      },
      attempt: async () => {
        calls++;
        if (calls === 2) controller.abort();
        throw unavailable();
      },
    }).catch((err: unknown) => err);
    expect(calls).to.equal(2);
    expect(signals).to.deep.equal([controller.signal]);
    expect((result as SscError).kind).to.equal('unavailable');
  });

  it('never starts an attempt once the signal aborted (a Mount carries secrets)', async () => {
    const controller = new AbortController();
    const reason = new Error('caller gone');
    controller.abort(reason);
    let calls = 0;
    const result = await callWithRetry<string>({
      attempts: 3,
      deadline: new Date(Date.now() + 3_600_000),
      isRetryable,
      signal: controller.signal,
      sleep: async () => undefined,
      attempt: async () => {
        calls++;
        return 'sent';
      },
    }).catch((err: unknown) => err);
    expect([calls, result]).to.deep.equal([0, reason]);
  });

  it('propagates a rejection of sleep (abort while waiting)', async () => {
    const reason = new Error('aborted');
    const r = await run([], {
      sleep: async () => {
        throw reason;
      },
    });
    expect(r).to.deep.equal({ result: reason, calls: 1, delays: [] });
  });
});
