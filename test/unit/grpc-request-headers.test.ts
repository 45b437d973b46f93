import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http2';
import { checkRequestHeaders, unknownPathMessage } from '../../proto/grpc/request-headers.js';
import { GrpcStatus } from '../../proto/grpc/status.js';

const SERVED = new Set(['/csi.v1.Identity/Probe', '/csi.v1.Node/NodePublishVolume']);
const describeUnknown = (path: string) => unknownPathMessage(path, SERVED);
const good: IncomingHttpHeaders = { ':method': 'POST', ':path': '/csi.v1.Identity/Probe', 'content-type': 'application/grpc', te: 'trailers' };

describe('proto/grpc request-headers: what a server makes of a request before its body', () => {
  const accepted: [string, IncomingHttpHeaders, object][] = [
    ['a plain request', good, { path: '/csi.v1.Identity/Probe', timeoutMs: undefined, encoding: 'identity' }],
    ['+proto content-type and a timeout', { ...good, 'content-type': 'application/grpc+proto', 'grpc-timeout': '1500m' }, { path: '/csi.v1.Identity/Probe', timeoutMs: 1500, encoding: 'identity' }],
    ['content-type parameters', { ...good, 'content-type': 'application/grpc;charset=utf-8' }, { path: '/csi.v1.Identity/Probe', timeoutMs: undefined, encoding: 'identity' }],
    ['gzip messages', { ...good, 'grpc-encoding': 'gzip' }, { path: '/csi.v1.Identity/Probe', timeoutMs: undefined, encoding: 'gzip' }],
    ['deflate messages', { ...good, 'grpc-encoding': 'deflate' }, { path: '/csi.v1.Identity/Probe', timeoutMs: undefined, encoding: 'deflate' }],
    ['a zero timeout (the server answers DEADLINE_EXCEEDED)', { ...good, 'grpc-timeout': '0n' }, { path: '/csi.v1.Identity/Probe', timeoutMs: 0, encoding: 'identity' }],
  ];
  for (const [what, headers, verdict] of accepted) {
    it(`accepts ${what}`, () => expect(checkRequestHeaders(headers, describeUnknown)).to.deep.equal(verdict));
  }

  const refused: [string, IncomingHttpHeaders, number, number, string][] = [
    ['a missing content-type with HTTP 415', { ...good, 'content-type': undefined }, 415, GrpcStatus.INVALID_ARGUMENT, 'invalid gRPC request content-type ""'],
    ['application/json with HTTP 415', { ...good, 'content-type': 'application/json' }, 415, GrpcStatus.INVALID_ARGUMENT, 'invalid gRPC request content-type "application/json"'],
    ['application/grpcweb with HTTP 415', { ...good, 'content-type': 'application/grpcweb' }, 415, GrpcStatus.INVALID_ARGUMENT, 'invalid gRPC request content-type "application/grpcweb"'],
    ['a malformed grpc-timeout with HTTP 400', { ...good, 'grpc-timeout': '5 seconds' }, 400, GrpcStatus.INTERNAL, 'malformed grpc-timeout: "5 seconds"'],
    ['GET with HTTP 405', { ...good, ':method': 'GET' }, 405, GrpcStatus.INTERNAL, 'Received a HEADERS frame with :method "GET" which should be POST'],
    ['the content-type before the method (grpc-go\'s order)', { ':method': 'GET', ':path': '/' }, 415, GrpcStatus.INVALID_ARGUMENT, 'invalid gRPC request content-type ""'],
    ['an unknown method of a served service', { ...good, ':path': '/csi.v1.Identity/Nope' }, 200, GrpcStatus.UNIMPLEMENTED, 'unknown method Nope for service csi.v1.Identity'],
    ['an unknown service', { ...good, ':path': '/csi.v1.Controller/CreateVolume' }, 200, GrpcStatus.UNIMPLEMENTED, 'unknown service csi.v1.Controller'],
    ['a path that is not /service/method', { ...good, ':path': 'Probe' }, 200, GrpcStatus.UNIMPLEMENTED, 'malformed method name: "Probe"'],
    ['a control character in the path, escaped', { ...good, ':path': '/a\u001b[31m/b' }, 200, GrpcStatus.UNIMPLEMENTED, 'unknown service a\\u001b[31m'],
    ['an unsupported grpc-encoding', { ...good, 'grpc-encoding': 'br' }, 200, GrpcStatus.UNIMPLEMENTED, 'grpc: Decompressor is not installed for grpc-encoding "br"'],
  ];
  for (const [what, headers, httpStatus, code, message] of refused) {
    it(`refuses ${what}`, () => expect(checkRequestHeaders(headers, describeUnknown)).to.deep.equal({ httpStatus, code, message }));
  }

  it('bounds a long client-chosen value in its message', () => {
    const verdict = checkRequestHeaders({ ...good, ':path': `/${'s'.repeat(5000)}/m` }, describeUnknown);
    expect('message' in verdict && verdict.message.length).to.be.below(150);
  });
});
