import { expect } from 'chai';
import { batches, turnOrder } from '../../bench/vs-go-cases.js';
import { checkTargets, compare, VS_TARGETS } from '../../bench/vs-go-report.js';

describe('the side-by-side benchmark against the Go driver (ratios, targets, turns)', () => {
  it('gives ours/theirs as the ratio, and none without the Go half', () => {
    expect(compare('x', 'x', 'ms', 8, 10).ratio).to.equal(0.8);
    expect(compare('x', 'x', 'ms', 8, null).ratio).to.equal(null);
    expect(compare('x', 'x', 'ms', 8, 0).ratio).to.equal(null);
  });

  const cases: [string, ReturnType<typeof compare>, string, 'met' | 'MISSED' | 'n/a'][] = [
    ['a ratio at the limit is met', compare('publish-10-p50', '', 'ms', 8, 10), 'publish-10-p50', 'met'],
    ['a ratio above the limit is missed', compare('publish-10-p50', '', 'ms', 9, 10), 'publish-10-p50', 'MISSED'],
    ['a ratio target without the Go half is n/a', compare('publish-10-p50', '', 'ms', 1, null), 'publish-10-p50', 'n/a'],
    ['a memory target is on our own MiB, Go half or not', compare('rss-idle', '', 'MiB', 54, null), 'rss-idle', 'met'],
    ['a memory target above its MiB is missed', compare('rss-500', '', 'MiB', 71, 50), 'rss-500', 'MISSED'],
    ['the provider CPU target allows 2×', compare('provider-cpu-10', '', 'ms', 0.8, 0.4), 'provider-cpu-10', 'met'],
  ];
  for (const [what, row, id, status] of cases) {
    it(what, () => {
      expect(checkTargets([row]).find((t) => t.rowId === id)?.status).to.equal(status);
    });
  }

  it('marks a target whose row was not measured n/a', () => {
    expect(checkTargets([]).map((t) => t.status)).to.deep.equal(VS_TARGETS.map(() => 'n/a'));
  });

  it('splits iterations into batches and alternates which driver goes first (ABBA)', () => {
    expect(batches(25, 10)).to.deep.equal([10, 10, 5]);
    expect(batches(0, 10)).to.deep.equal([]);
    expect([0, 1, 2].map((i) => turnOrder(['ours', 'theirs'], i))).to.deep.equal([['ours', 'theirs'], ['theirs', 'ours'], ['ours', 'theirs']]);
  });
});
