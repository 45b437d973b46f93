import { expect } from 'chai';
import { backoffDelay, backoffKey, ClassBackoff, FIRST_BACKOFF_MS } from '../../../../driver/rotation/class-backoff.js';

describe('backoffDelay', () => {
  const table: readonly [failures: number, intervalMs: number, random: number, expected: number][] = [
    [1, 60_000, 0, FIRST_BACKOFF_MS / 2],
    [1, 60_000, 0.999999, FIRST_BACKOFF_MS],
    [2, 60_000, 0, 1_000],
    [3, 60_000, 0.5, 3_000],
    [6, 60_000, 0, 16_000],
    [7, 60_000, 0.999999, 60_000], // 64 s capped at the interval
    [50, 60_000, 0, 30_000], // never past the interval, however many failures
    [50, 10_000, 0.5, 7_500],
  ];
  for (const [failures, interval, random, expected] of table) {
    it(`${failures} failure(s), interval ${interval} ms, jitter ${random} → ${expected} ms`, () => {
      expect(backoffDelay(failures, interval, random)).to.equal(expected);
    });
  }
});

describe('ClassBackoff', () => {
  const key = backoffKey({ namespace: 'n', spcName: 's', serviceAccountName: 'sa' });

  it('names a group by class and service account, without collisions between the parts', () => {
    expect(backoffKey({ namespace: 'n', spcName: 's', serviceAccountName: 'sa' })).to.not.equal(
      backoffKey({ namespace: 'n', spcName: 's\u0000sa', serviceAccountName: '' }),
    );
    expect(key).to.not.equal(backoffKey({ namespace: 'n', spcName: 's', serviceAccountName: 'other' }));
  });

  it('admits every call of a group that never failed', () => {
    const b = new ClassBackoff(() => 0);
    expect(b.admit(key, 0)).to.deep.equal({ call: true });
    expect(b.admit(key, 0)).to.deep.equal({ call: true });
  });

  it('after a failure: nothing until the wait is over, then one trial at a time', () => {
    const b = new ClassBackoff(() => 0);
    expect(b.settle(key, { ok: false }, 60_000, 0)).to.equal(500);
    expect(b.admit(key, 499)).to.deep.equal({ call: false, until: 500 });
    expect(b.admit(key, 500)).to.deep.equal({ call: true });
    expect(b.admit(key, 501), 'the trial is out').to.deep.equal({ call: false, until: 501 });
    b.release(key);
    expect(b.admit(key, 502), 'a released trial lets another volume try').to.deep.equal({ call: true });
  });

  it('a failed trial doubles the wait; a success clears the group', () => {
    const b = new ClassBackoff(() => 0);
    b.settle(key, { ok: false }, 60_000, 0);
    b.admit(key, 500);
    expect(b.settle(key, { ok: false }, 60_000, 500)).to.equal(1_000);
    b.admit(key, 1_500);
    expect(b.settle(key, { ok: true }, 60_000, 1_600)).to.equal(undefined);
    expect(b.until(key)).to.equal(undefined);
    expect(b.admit(key, 1_600)).to.deep.equal({ call: true });
  });

  it("takes the provider's pushback as the wait, even when longer than the interval", () => {
    const b = new ClassBackoff(() => 0);
    expect(b.settle(key, { ok: false, retryAfterMs: 120_000 }, 60_000, 0)).to.equal(120_000);
    expect(b.admit(key, 119_999).call).to.equal(false);
  });

  it('a failure never shortens a wait already set', () => {
    const b = new ClassBackoff(() => 0);
    b.settle(key, { ok: false, retryAfterMs: 30_000 }, 60_000, 0);
    expect(b.settle(key, { ok: false }, 60_000, 10)).to.equal(29_990);
  });

  it('forgets groups with no volume mounted', () => {
    const b = new ClassBackoff(() => 0);
    b.settle(key, { ok: false }, 60_000, 0);
    b.retain(new Set());
    expect(b.size).to.equal(0);
  });
});
