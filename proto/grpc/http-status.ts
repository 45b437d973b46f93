// What a client makes of a response that carries no grpc-status, or of a stream reset:
// grpc/doc/http-grpc-status-mapping.md (HTTP status → gRPC code, only when grpc-status is
// absent) and the RST_STREAM table of grpc/doc/PROTOCOL-HTTP2.md (as grpc-go applies it).
import { constants } from 'node:http2';
import { GrpcStatus, type GrpcStatusCode } from './status.js';

const HTTP_TO_GRPC: ReadonlyMap<number, GrpcStatusCode> = new Map([
  [400, GrpcStatus.INTERNAL],
  [401, GrpcStatus.UNAUTHENTICATED],
  [403, GrpcStatus.PERMISSION_DENIED],
  [404, GrpcStatus.UNIMPLEMENTED],
  [429, GrpcStatus.UNAVAILABLE],
  [502, GrpcStatus.UNAVAILABLE],
  [503, GrpcStatus.UNAVAILABLE],
  [504, GrpcStatus.UNAVAILABLE],
]);

/** The gRPC code for an HTTP status of a response without grpc-status; UNKNOWN for the rest. */
export function grpcCodeForHttpStatus(httpStatus: number): GrpcStatusCode {
  return HTTP_TO_GRPC.get(httpStatus) ?? GrpcStatus.UNKNOWN;
}

const RST_TO_GRPC: ReadonlyMap<number, GrpcStatusCode> = new Map([
  [constants.NGHTTP2_NO_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_PROTOCOL_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_INTERNAL_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_FLOW_CONTROL_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_SETTINGS_TIMEOUT, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_FRAME_SIZE_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_REFUSED_STREAM, GrpcStatus.UNAVAILABLE],
  [constants.NGHTTP2_CANCEL, GrpcStatus.CANCELLED],
  [constants.NGHTTP2_COMPRESSION_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_CONNECT_ERROR, GrpcStatus.INTERNAL],
  [constants.NGHTTP2_ENHANCE_YOUR_CALM, GrpcStatus.RESOURCE_EXHAUSTED],
  [constants.NGHTTP2_INADEQUATE_SECURITY, GrpcStatus.PERMISSION_DENIED],
]);

/** The gRPC code for a stream the server reset with HTTP/2 error `rstCode` before any status; UNKNOWN for codes HTTP/2 does not define (as grpc-go). */
export function grpcCodeForRstStream(rstCode: number): GrpcStatusCode {
  return RST_TO_GRPC.get(rstCode) ?? GrpcStatus.UNKNOWN;
}
