import { expect } from 'chai';
import { deflateSync, gzipSync } from 'node:zlib';
import { decompressMessage, messageEncoding } from '../../proto/grpc/compression.js';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { rejection } from '../support/deferred.js';

describe('proto/grpc compression: compressed messages, bounded', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, 'identity'], ['', 'identity'], ['identity', 'identity'], ['gzip', 'gzip'], ['deflate', 'deflate'],
    ['snappy', undefined], ['GZIP', undefined], ['br', undefined],
  ];
  for (const [header, encoding] of cases) {
    it(`grpc-encoding ${JSON.stringify(header)} → ${encoding ?? 'unsupported'}`, () => expect(messageEncoding(header)).to.equal(encoding));
  }

  const text = Buffer.from('secret-free payload '.repeat(50));
  it('inflates gzip and deflate (zlib format, as grpc-js and grpc-go write it)', async () => {
    expect(await decompressMessage('gzip', gzipSync(text), 4096)).to.deep.equal(text);
    expect(await decompressMessage('deflate', deflateSync(text), 4096)).to.deep.equal(text);
  });

  it('accepts exactly the limit', async () => {
    expect((await decompressMessage('gzip', gzipSync(text), text.length)).length).to.equal(text.length);
  });

  it('stops a bomb at the limit: 64 MiB of zeros from a few KiB, with RESOURCE_EXHAUSTED "larger than max"', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).to.be.below(100 * 1024);
    const err = await rejection(decompressMessage('gzip', bomb, 1024 * 1024));
    expect(err).to.be.instanceOf(GrpcError);
    expect((err as GrpcError).code).to.equal(GrpcStatus.RESOURCE_EXHAUSTED);
    expect((err as GrpcError).details).to.match(/larger than max/);
  });

  const failures: [string, 'identity' | 'gzip' | 'deflate', Buffer, number, RegExp][] = [
    ['bytes that do not inflate', 'gzip', Buffer.from('not gzip at all'), GrpcStatus.INTERNAL, /^could not decompress a gzip message$/],
    ['gzip bytes declared deflate', 'deflate', gzipSync(Buffer.from('x')), GrpcStatus.INTERNAL, /could not decompress a deflate message/],
    ['a compressed flag with identity', 'identity', Buffer.from('x'), GrpcStatus.INTERNAL, /compressed flag set with identity/],
  ];
  for (const [what, encoding, bytes, code, message] of failures) {
    it(`refuses ${what}`, async () => {
      const err = await rejection(decompressMessage(encoding, bytes, 1024)) as GrpcError;
      expect([err.code, message.test(err.details)]).to.deep.equal([code, true]);
    });
  }
});
