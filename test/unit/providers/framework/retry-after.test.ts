import { expect } from 'chai';
import { retryAfterMs } from '../../../../providers/framework/retry-after.js';

describe('retryAfterMs (HTTP Retry-After)', () => {
  const now = Date.parse('2026-11-29T00:00:00Z');
  const table: readonly [value: string | undefined, expected: number | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['0', 0],
    ['49', 49_000],
    [' 3 ', 3_000],
    ['-1', undefined],
    ['1.5', undefined],
    ['99999999', undefined], // past delay-seconds' range here, and no date
    ['Sun, 29 Nov 2026 00:00:30 GMT', 30_000],
    ['Sat, 28 Nov 2026 23:59:00 GMT', 0], // a date in the past: no wait
    ['tomorrow', undefined],
  ];
  for (const [value, expected] of table) {
    it(`${JSON.stringify(value)} → ${String(expected)}`, () => {
      expect(retryAfterMs(value, now)).to.equal(expected);
    });
  }
});
