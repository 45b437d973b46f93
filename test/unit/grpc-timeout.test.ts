import { expect } from 'chai';
import { formatGrpcTimeout, parseGrpcTimeout } from '../../proto/grpc/timeout.js';

describe('proto/grpc timeout: the grpc-timeout header', () => {
  describe('parseGrpcTimeout', () => {
    const cases: [string, number | undefined][] = [
      ['1H', 3_600_000],
      ['2M', 120_000],
      ['30S', 30_000],
      ['1500m', 1_500],
      ['2500u', 2.5],
      ['3000000n', 3],
      ['0n', 0],
      ['99999999S', 99_999_999_000],
      ['00000010m', 10],
      ['123456789m', undefined], // 9 digits: the spec allows at most 8
      ['10', undefined], // no unit
      ['m', undefined], // no value
      ['10s', undefined], // seconds are upper-case S
      ['10ms', undefined],
      ['-5m', undefined],
      ['1.5S', undefined],
      [' 5S', undefined],
      ['5S ', undefined],
      ['', undefined],
    ];
    for (const [value, ms] of cases) {
      it(`${JSON.stringify(value)} → ${ms === undefined ? 'malformed' : `${ms} ms`}`, () => {
        expect(parseGrpcTimeout(value)).to.equal(ms);
      });
    }
  });

  describe('formatGrpcTimeout', () => {
    const cases: [number, string][] = [
      [1, '1m'],
      [0.2, '1m'], // rounded up: the server's deadline is never earlier than the client's
      [1500, '1500m'],
      [99_999_999, '99999999m'],
      [100_000_000, '100000S'],
      [100_000_001, '100001S'],
      [99_999_999_000 + 1, '1666667M'],
      [3_600_000 * 1e9, '99999999H'], // clamped to the largest expressible value
      [0, '0m'],
      [-5, '0m'],
    ];
    for (const [ms, header] of cases) {
      it(`${ms} ms → ${header}`, () => {
        expect(formatGrpcTimeout(ms)).to.equal(header);
      });
    }

    it('round-trips to a timeout no shorter than the one formatted', () => {
      for (const ms of [1, 7, 999, 60_000, 123_456_789, 9_876_543_210]) {
        const back = parseGrpcTimeout(formatGrpcTimeout(ms));
        expect(back).to.be.a('number');
        expect(back as number).to.be.at.least(ms);
      }
    });
  });
});
