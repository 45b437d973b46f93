import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import {
  MAX_ATTEMPTS,
  throttleWaitMs,
  withThrottleRetry,
  type RetryClock,
} from '../../../../providers/azure/throttle-retry.js';

/** An error shaped like the SDK's RestError for a response with these headers. */
function restError(statusCode: number, headers: Record<string, string> = {}, code?: string): Error {
  const err = new Error(`HTTP ${statusCode}`) as Error & {
    statusCode: number;
    code?: string;
    response: { headers: { get(n: string): string | undefined } };
  };
  err.statusCode = statusCode;
  if (code !== undefined) err.code = code;
  err.response = { headers: { get: (n: string) => headers[n.toLowerCase()] } };
  return err;
}

/** A clock that moves only when slept on, recording each sleep. */
function fakeClock(start = 1_000_000): RetryClock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

describe('azure throttle retry', () => {
  describe('throttleWaitMs', () => {
    const now = Date.parse('2026-11-24T10:00:00Z');
    const cases: [string, unknown, number | undefined][] = [
      ['429 Retry-After seconds', restError(429, { 'retry-after': '3' }), 3000],
      ['429 retry-after-ms wins', restError(429, { 'retry-after-ms': '250', 'retry-after': '9' }), 250],
      ['429 x-ms-retry-after-ms', restError(429, { 'x-ms-retry-after-ms': '40' }), 40],
      ['429 Retry-After HTTP date', restError(429, { 'retry-after': 'Tue, 24 Nov 2026 10:00:05 GMT' }), 5000],
      ['429 without a header: 1 s', restError(429), 1000],
      ['503 with Retry-After', restError(503, { 'retry-after': '2' }), 2000],
      ['503 without a header is an outage', restError(503), undefined],
      ['404 is not throttling', restError(404, { 'retry-after': '1' }), undefined],
      ['not an HTTP error', new Error('x'), undefined],
    ];
    for (const [name, err, want] of cases)
      it(name, () => {
        expect(throttleWaitMs(err, now)).to.equal(want);
      });
  });

  it('waits as asked and retries while the wait fits before the deadline', async () => {
    const clock = fakeClock();
    let calls = 0;
    const value = await withThrottleRetry(
      async () => {
        calls++;
        if (calls < 3) throw restError(429, { 'retry-after': '2' });
        return 'ok';
      },
      'secret "a"',
      clock.now() + 10_000,
      new AbortController().signal,
      clock,
    );
    expect(value).to.equal('ok');
    expect(clock.slept).to.deep.equal([2000, 2000]);
  });

  // RESOURCE_EXHAUSTED, not UNAVAILABLE: the driver retries a provider's UNAVAILABLE at once
  // (100 ms, 200 ms), which would ask a vault that said "wait 30 s" twice more.
  it('fails at once, RESOURCE_EXHAUSTED KeyVaultThrottled, when the wait would pass the deadline', async () => {
    const clock = fakeClock();
    let calls = 0;
    const err = await withThrottleRetry(
      async () => {
        calls++;
        throw restError(429, { 'retry-after': '30' });
      },
      'secret "a"',
      clock.now() + 5_000,
      new AbortController().signal,
      clock,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).to.equal(1);
    expect(clock.slept).to.deep.equal([]);
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('resource-exhausted');
    expect((err as SscError).reason).to.equal('KeyVaultThrottled');
    expect((err as SscError).message)
      .to.include('asked to wait 30s')
      .and.include('5s left');
  });

  it('gives up after MAX_ATTEMPTS, passing the last error on', async () => {
    const clock = fakeClock();
    let calls = 0;
    const last = restError(429, { 'retry-after': '0' });
    const err = await withThrottleRetry(
      async () => {
        calls++;
        throw last;
      },
      'x',
      undefined,
      new AbortController().signal,
      clock,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(calls).to.equal(MAX_ATTEMPTS);
    expect(err).to.equal(last);
  });

  it('retries a reset connection after a short pause, and nothing else', async () => {
    const clock = fakeClock();
    let calls = 0;
    expect(
      await withThrottleRetry(
        async () => {
          calls++;
          if (calls === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
          return 1;
        },
        'x',
        undefined,
        new AbortController().signal,
        clock,
      ),
    ).to.equal(1);
    expect(clock.slept).to.deep.equal([200]);
    const notFound = restError(404, {}, 'SecretNotFound');
    calls = 0;
    const err = await withThrottleRetry(
      async () => {
        calls++;
        throw notFound;
      },
      'x',
      undefined,
      new AbortController().signal,
      clock,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect([calls, err]).to.deep.equal([1, notFound]);
  });
});
