import { expect } from 'chai';
import { forEachLimited } from '../../../../lib/concurrency.js';
import { jitterOf, RotationSchedule } from '../../../../driver/rotation/schedule.js';

const MIN = 60_000;

describe('RotationSchedule', () => {
  it('makes a volume it has never seen due at once', () => {
    expect(new RotationSchedule().isDue('/t', MIN, 0)).to.equal(true);
  });

  it('is due one interval (plus a stable jitter under 10%) after the last attempt', () => {
    const s = new RotationSchedule();
    s.record('/t', 'unchanged', 1_000_000);
    const due = s.nextDue('/t', MIN);
    expect(due).to.equal(1_000_000 + MIN + jitterOf('/t') * MIN * 0.1);
    expect(due - 1_000_000 - MIN).to.be.within(0, MIN * 0.1);
    expect(s.isDue('/t', MIN, due - 1)).to.equal(false);
    expect(s.isDue('/t', MIN, due)).to.equal(true);
  });

  it('spreads volumes with different jitter', () => {
    const offsets = new Set(['/a', '/b', '/c', '/d'].map((k) => jitterOf(k)));
    expect(offsets.size).to.equal(4);
    for (const o of offsets) expect(o).to.be.within(0, 1);
  });

  it('backs off exponentially after consecutive failures, capped at 8 intervals, and resets on success', () => {
    const s = new RotationSchedule();
    const gaps: number[] = [];
    for (let i = 0; i < 5; i++) {
      s.record('/t', 'failed', 0);
      gaps.push(Math.floor(s.nextDue('/t', MIN) / MIN));
    }
    expect(gaps).to.deep.equal([2, 4, 8, 8, 8]);
    s.record('/t', 'changed', 0);
    expect(Math.floor(s.nextDue('/t', MIN) / MIN)).to.equal(1);
  });

  it('treats a recent success as fresh (kubelet republish no-op) and a failure as not', () => {
    const s = new RotationSchedule();
    s.record('/t', 'unchanged', 0);
    expect(s.isFresh('/t', MIN, MIN - 1)).to.equal(true);
    expect(s.isFresh('/t', MIN, MIN)).to.equal(false);
    const f = new RotationSchedule();
    f.record('/t', 'failed', 0);
    expect(f.isFresh('/t', MIN, 1)).to.equal(false);
  });

  it('counts a skipped refresh as an attempt (no spinning), without touching failures, and forgets volumes that are gone', () => {
    const s = new RotationSchedule();
    s.record('/t', 'failed', 0);
    s.record('/t', 'skipped', MIN);
    expect(Math.floor((s.nextDue('/t', MIN) - MIN) / MIN)).to.equal(2);
    expect(s.isFresh('/t', MIN, MIN + 1)).to.equal(false);
    s.record('/a', 'changed', 0);
    s.record('/b', 'changed', 0);
    s.retain(new Set(['/a']));
    expect(s.size).to.equal(1);
    expect(s.isDue('/b', MIN, 1)).to.equal(true);
  });
});

describe('forEachLimited', () => {
  it('runs at most `limit` at a time per group, groups in parallel, each group in order, and survives failures', async () => {
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    let total = 0;
    let peakTotal = 0;
    const started: string[] = [];
    const done: string[] = [];
    const items = ['a1', 'a2', 'a3', 'a4', 'a5', 'b1', 'b2', 'b3'];
    await forEachLimited(
      items,
      (i) => i[0] as string,
      2,
      async (i) => {
        const g = i[0] as string;
        started.push(i);
        running.set(g, (running.get(g) ?? 0) + 1);
        peak.set(g, Math.max(peak.get(g) ?? 0, running.get(g) ?? 0));
        peakTotal = Math.max(peakTotal, ++total);
        await new Promise((r) => setImmediate(r));
        running.set(g, (running.get(g) ?? 0) - 1);
        total--;
        done.push(i);
        if (i === 'a2') throw new Error('boom');
      },
    );
    expect([...done].sort()).to.deep.equal([...items].sort());
    expect(peak.get('a')).to.equal(2);
    expect(peak.get('b')).to.equal(2);
    // One limiter per group, not one for all: both groups had two running at once.
    expect(peakTotal).to.equal(4);
    expect(started.filter((i) => i.startsWith('a'))).to.deep.equal(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(started.filter((i) => i.startsWith('b'))).to.deep.equal(['b1', 'b2', 'b3']);
  });

  it('a work that throws instead of rejecting neither rejects the whole nor stops its group', async () => {
    const done: number[] = [];
    const work = (i: number): Promise<void> => {
      if (i === 0) throw new Error('thrown, not rejected');
      done.push(i);
      return Promise.resolve();
    };
    await forEachLimited([0, 1, 2, 3], () => 'g', 1, work);
    expect(done).to.deep.equal([1, 2, 3]);
  });

  it('resolves at once for no items', async () => {
    await forEachLimited(
      [],
      () => 'g',
      2,
      () => Promise.reject(new Error('not called')),
    );
  });
});
