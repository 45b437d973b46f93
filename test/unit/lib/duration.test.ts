import { expect } from 'chai';
import { formatGoDuration, parseGoDuration } from '../../../lib/duration.js';

describe('parseGoDuration', () => {
  const valid: [string, number][] = [
    ['2m', 120_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['300ms', 300],
    ['0', 0],
    ['-1m', -60_000],
    ['1h0m0s', 3_600_000],
    ['500us', 0.5],
    ['.5s', 500],
    ['2h45m30.5s', 9_930_500],
    ['+3s', 3000],
  ];
  for (const [input, ms] of valid) {
    it(`parses ${input} as ${ms} ms`, () => expect(parseGoDuration(input)).to.equal(ms));
  }
  const invalid: [string, RegExp][] = [
    ['', /empty/],
    ['abc', /invalid/],
    ['1x', /unknown unit "x"/],
    ['10', /missing unit/],
    ['1m5', /missing unit/],
    ['-', /invalid/],
    ['1.2.3s', /missing unit|invalid/],
  ];
  for (const [input, message] of invalid) {
    it(`rejects ${JSON.stringify(input)}`, () => expect(() => parseGoDuration(input)).to.throw(message));
  }
});

describe('formatGoDuration', () => {
  for (const [ms, text] of [
    [120_000, '2m0s'],
    [5_400_000, '1h30m0s'],
    [500, '500ms'],
    [0, '0s'],
    [1500, '1.5s'],
  ] as const) {
    it(`formats ${ms} as ${text}`, () => expect(formatGoDuration(ms)).to.equal(text));
  }
});
