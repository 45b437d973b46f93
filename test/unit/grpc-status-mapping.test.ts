import { expect } from 'chai';
import { constants } from 'node:http2';
import { grpcCodeForHttpStatus, grpcCodeForRstStream } from '../../proto/grpc/http-status.js';
import { responseOutcome, type ResponseSummary } from '../../proto/grpc/response-status.js';
import { GrpcStatus } from '../../proto/grpc/status.js';

describe('proto/grpc status mapping: how a client call ended', () => {
  describe('grpcCodeForHttpStatus (http-grpc-status-mapping.md)', () => {
    const cases: [number, number][] = [
      [400, GrpcStatus.INTERNAL], [401, GrpcStatus.UNAUTHENTICATED], [403, GrpcStatus.PERMISSION_DENIED],
      [404, GrpcStatus.UNIMPLEMENTED], [429, GrpcStatus.UNAVAILABLE], [502, GrpcStatus.UNAVAILABLE],
      [503, GrpcStatus.UNAVAILABLE], [504, GrpcStatus.UNAVAILABLE], [200, GrpcStatus.UNKNOWN],
      [415, GrpcStatus.UNKNOWN], [500, GrpcStatus.UNKNOWN], [301, GrpcStatus.UNKNOWN],
    ];
    for (const [http, grpc] of cases) it(`HTTP ${http} → ${grpc}`, () => expect(grpcCodeForHttpStatus(http)).to.equal(grpc));
  });

  describe('grpcCodeForRstStream (PROTOCOL-HTTP2.md)', () => {
    const cases: [string, number, number][] = [
      ['NO_ERROR', constants.NGHTTP2_NO_ERROR, GrpcStatus.INTERNAL],
      ['PROTOCOL_ERROR', constants.NGHTTP2_PROTOCOL_ERROR, GrpcStatus.INTERNAL],
      ['REFUSED_STREAM', constants.NGHTTP2_REFUSED_STREAM, GrpcStatus.UNAVAILABLE],
      ['CANCEL', constants.NGHTTP2_CANCEL, GrpcStatus.CANCELLED],
      ['ENHANCE_YOUR_CALM', constants.NGHTTP2_ENHANCE_YOUR_CALM, GrpcStatus.RESOURCE_EXHAUSTED],
      ['INADEQUATE_SECURITY', constants.NGHTTP2_INADEQUATE_SECURITY, GrpcStatus.PERMISSION_DENIED],
      ['an undefined code', 0x99, GrpcStatus.UNKNOWN],
    ];
    for (const [what, code, grpc] of cases) it(`${what} → ${grpc}`, () => expect(grpcCodeForRstStream(code)).to.equal(grpc));
  });

  describe('responseOutcome', () => {
    const grpcHeaders = { httpStatus: 200, contentType: 'application/grpc' };
    const ok = { status: '0', message: undefined };
    const cases: [string, ResponseSummary, number | undefined, string | RegExp | undefined][] = [
      ['one message and status 0 is success', { headers: grpcHeaders, trailers: ok, messages: 1, pendingBytes: 0 }, undefined, undefined],
      ['content-type with +proto is gRPC', { headers: { httpStatus: 200, contentType: 'application/grpc+proto' }, trailers: ok, messages: 1, pendingBytes: 0 }, undefined, undefined],
      ['an error status, its message percent-decoded', { headers: grpcHeaders, trailers: { status: '5', message: 'n%C3%B6t 100%25' }, messages: 0, pendingBytes: 0 }, 5, 'nöt 100%'],
      ['an error status with no message', { headers: grpcHeaders, trailers: { status: '7', message: undefined }, messages: 0, pendingBytes: 0 }, 7, ''],
      ['a code outside 0–16 kept as it is', { headers: grpcHeaders, trailers: { status: '42', message: 'x' }, messages: 0, pendingBytes: 0 }, 42, 'x'],
      ['an error status even after a message', { headers: grpcHeaders, trailers: { status: '13', message: 'late' }, messages: 1, pendingBytes: 0 }, 13, 'late'],
      ['status 0 without a message', { headers: grpcHeaders, trailers: ok, messages: 0, pendingBytes: 0 }, GrpcStatus.INTERNAL, /received no response message/],
      ['status 0 with two messages', { headers: grpcHeaders, trailers: ok, messages: 2, pendingBytes: 0 }, GrpcStatus.INTERNAL, /but received another message/],
      ['status 0 after half a message', { headers: grpcHeaders, trailers: ok, messages: 0, pendingBytes: 3 }, GrpcStatus.INTERNAL, 'the response ended inside a message (3 bytes of it received)'],
      ['trailers without grpc-status (grpc-go: UNKNOWN)', { headers: grpcHeaders, trailers: { status: undefined, message: undefined }, messages: 1, pendingBytes: 0 }, GrpcStatus.UNKNOWN, /without a grpc-status/],
      ['a malformed grpc-status', { headers: grpcHeaders, trailers: { status: 'ok', message: undefined }, messages: 1, pendingBytes: 0 }, GrpcStatus.UNKNOWN, 'malformed grpc-status: "ok"'],
      ['HTTP 503 with gRPC content-type and no grpc-status', { headers: { httpStatus: 503, contentType: 'application/grpc' }, trailers: { status: undefined, message: undefined }, messages: 0, pendingBytes: 0 },
        GrpcStatus.UNAVAILABLE, 'unexpected HTTP status code received from server: 503 (Service Unavailable)'],
      ['HTTP 415 with a grpc-status: the grpc-status counts', { headers: { httpStatus: 415, contentType: 'application/grpc' }, trailers: { status: '3', message: 'bad type' }, messages: 0, pendingBytes: 0 }, 3, 'bad type'],
      ['HTTP 404 text/html (a proxy page)', { headers: { httpStatus: 404, contentType: 'text/html' }, messages: 0, pendingBytes: 0 },
        GrpcStatus.UNIMPLEMENTED, 'unexpected HTTP status code received from server: 404 (Not Found); received unexpected content-type "text/html"'],
      ['HTTP 502 without content-type, even with a grpc-status', { headers: { httpStatus: 502, contentType: undefined }, trailers: { status: '0', message: undefined }, messages: 0, pendingBytes: 0 },
        GrpcStatus.UNAVAILABLE, 'unexpected HTTP status code received from server: 502 (Bad Gateway); malformed header: missing HTTP content-type'],
      ['HTTP 200 with a non-gRPC content-type', { headers: { httpStatus: 200, contentType: 'application/json' }, messages: 0, pendingBytes: 0 }, GrpcStatus.UNKNOWN, /200 \(OK\); received unexpected content-type "application\/json"/],
      ['"application/grpcx" is not gRPC', { headers: { httpStatus: 200, contentType: 'application/grpcx' }, trailers: ok, messages: 1, pendingBytes: 0 }, GrpcStatus.UNKNOWN, /unexpected content-type/],
      ['no :status', { headers: { httpStatus: undefined, contentType: 'text/plain' }, messages: 0, pendingBytes: 0 }, GrpcStatus.INTERNAL, /missing HTTP status/],
      ['a stream ended without trailers', { headers: grpcHeaders, messages: 1, pendingBytes: 0 }, GrpcStatus.INTERNAL, 'server closed the stream without sending trailers'],
      ['a reset REFUSED_STREAM before any answer', { messages: 0, pendingBytes: 0, rstCode: constants.NGHTTP2_REFUSED_STREAM }, GrpcStatus.UNAVAILABLE, 'stream terminated by RST_STREAM with error code: 7'],
      ['a reset CANCEL after the headers', { headers: grpcHeaders, messages: 0, pendingBytes: 0, rstCode: constants.NGHTTP2_CANCEL }, GrpcStatus.CANCELLED, /error code: 8/],
      ['a reset after the trailers does not count', { headers: grpcHeaders, trailers: ok, messages: 1, pendingBytes: 0, rstCode: constants.NGHTTP2_NO_ERROR }, undefined, undefined],
      ['nothing at all', { messages: 0, pendingBytes: 0 }, GrpcStatus.INTERNAL, 'stream closed without a response'],
    ];
    for (const [what, summary, code, message] of cases) {
      it(what, () => {
        const err = responseOutcome(summary);
        if (code === undefined) { expect(err).to.equal(undefined); return; }
        expect(err?.code).to.equal(code);
        if (message instanceof RegExp) expect(err?.details).to.match(message);
        else expect(err?.details).to.equal(message);
      });
    }
  });
});
