import { expect } from 'chai';
import { callTimeoutMs, DEADLINE_MARGIN_MS } from '../../../../providers/framework/call-deadline.js';

describe('callTimeoutMs', () => {
  it('keeps 250 ms back, as the driver does from kubelet', () => expect(DEADLINE_MARGIN_MS).to.equal(250));

  const cases: [name: string, deadlineMs: number | undefined, nowMs: number, limitMs: number, expected: number][] = [
    ['no deadline: the limit', undefined, 0, 10_000, 10_000],
    ['a far deadline: the limit', 60_000, 0, 10_000, 10_000],
    ['a near deadline: the time left less the margin', 3_000, 0, 10_000, 2_750],
    ['measured from now', 1_003_000, 1_000_000, 10_000, 2_750],
    ['just the margin left: none', 250, 0, 10_000, 0],
    ['less than the margin left: none, never negative', 100, 0, 10_000, 0],
    ['a passed deadline: none', 0, 5_000, 10_000, 0],
    ['one millisecond past the margin', 251, 0, 10_000, 1],
    ['a short limit stays', 60_000, 0, 100, 100],
  ];
  for (const [name, deadlineMs, nowMs, limitMs, expected] of cases) {
    it(`${name}: ${expected} ms`, () => expect(callTimeoutMs(deadlineMs, nowMs, limitMs)).to.equal(expected));
  }
});
