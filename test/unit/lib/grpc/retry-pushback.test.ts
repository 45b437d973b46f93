import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import {
  MAX_PUSHBACK_MS,
  pushbackMetadata,
  pushbackOf,
  RETRY_PUSHBACK_KEY,
} from '../../../../lib/grpc/retry-pushback.js';

describe('grpc-retry-pushback-ms', () => {
  const withValues = (...values: string[]): grpc.Metadata => {
    const m = new grpc.Metadata();
    for (const v of values) m.add(RETRY_PUSHBACK_KEY, v);
    return m;
  };
  const table: readonly [what: string, metadata: grpc.Metadata | undefined, expected: number | undefined][] = [
    ['no metadata', undefined, undefined],
    ['no trailer', new grpc.Metadata(), undefined],
    ['0', withValues('0'), 0],
    ['2500', withValues('2500'), 2500],
    ['more than an hour: cut to an hour', withValues('86400000'), MAX_PUSHBACK_MS],
    ['negative (gRFC A6: do not retry)', withValues('-1'), undefined],
    ['not a number', withValues('soon'), undefined],
    ['a fraction', withValues('1.5'), undefined],
    ['two values', withValues('1', '2'), undefined],
  ];
  for (const [what, metadata, expected] of table) {
    it(`reads ${what} as ${String(expected)}`, () => {
      expect(pushbackOf(metadata)).to.equal(expected);
    });
  }

  it('writes a wait rounded up to whole milliseconds, never negative, that reads back', () => {
    expect(pushbackMetadata(1500.2).get(RETRY_PUSHBACK_KEY)).to.deep.equal(['1501']);
    expect(pushbackMetadata(-5).get(RETRY_PUSHBACK_KEY)).to.deep.equal(['0']);
    expect(pushbackOf(pushbackMetadata(30_000))).to.equal(30_000);
  });
});
