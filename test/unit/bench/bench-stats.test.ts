import { expect } from 'chai';
import { delta, median, numberOption, percentile } from '../../../bench/stats.js';

describe('bench/stats: medians, percentiles and numeric options', () => {
  it('takes the delta of two counter records: what grew, new keys included, unchanged ones left out', () => {
    expect(delta({ a: 1, b: 2 }, { a: 1, b: 5, c: 1 })).to.deep.equal({ b: 3, c: 1 });
  });

  it('takes the middle value of an odd count and the mean of the middle two of an even count', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([1068, 1087, 1176, 1197, 1205, 1053])).to.equal((1087 + 1176) / 2);
    expect(() => median([])).to.throw(/no samples/);
  });

  it('takes nearest-rank percentiles of sorted samples', () => {
    expect(percentile([1, 2, 3, 4], 50)).to.equal(2);
    expect(percentile([1, 2, 3, 4], 99)).to.equal(4);
  });

  it('reads a numeric option, falls back when it is absent and names it when it is bad', () => {
    expect(numberOption(['--runs', '9', '--pace', '150'], '--pace', 2)).to.equal(150);
    expect(numberOption(['--runs', '9'], '--pace', 2)).to.equal(2);
    expect(() => numberOption(['--pace', 'abc'], '--pace', 2)).to.throw(/--pace: expected a number ≥ 0, got "abc"/);
    expect(() => numberOption(['--pace'], '--pace', 2)).to.throw(/--pace: .*got nothing/);
    expect(() => numberOption(['--runs', '0'], '--runs', 5, 1)).to.throw(/--runs: expected a number ≥ 1/);
    expect(() => numberOption(['--pace', '-1'], '--pace', 2)).to.throw(/--pace/);
  });
});
