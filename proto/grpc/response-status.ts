// How a client call ended, decided from what arrived on its stream (grpc-go's
// internal/transport/http2_client.go and stream.go are the model): the grpc-status of the
// Trailers (or Trailers-Only) when there is one, the HTTP status when the response is not
// gRPC at all, the reset code otherwise. (A lost connection is the caller's to tell: it
// knows the socket and the errno.)
import { isGrpcContentType } from './headers.js';
import { grpcCodeForHttpStatus, grpcCodeForRstStream } from './http-status.js';
import { decodeGrpcMessage } from './message-text.js';
import { GrpcError, GrpcStatus } from './status.js';

/** What a client saw on one call's stream by the time it closed. */
export interface ResponseSummary {
  /** The first HEADERS (Response-Headers or Trailers-Only); undefined when none arrived. */
  readonly headers?: { readonly httpStatus: number | undefined; readonly contentType: string | undefined };
  /** grpc-status and grpc-message of the Trailers or the Trailers-Only; undefined when none arrived. */
  readonly trailers?: { readonly status: string | undefined; readonly message: string | undefined };
  /** Complete messages received. */
  readonly messages: number;
  /** Bytes of a message begun and never finished. */
  readonly pendingBytes: number;
  /** The HTTP/2 error code when the server reset the stream; undefined when it did not. */
  readonly rstCode?: number | undefined;
}

/** The error a call ends with, or undefined when it succeeded with exactly one message. */
export function responseOutcome(r: ResponseSummary): GrpcError | undefined {
  if (r.headers && !isGrpcContentType(r.headers.contentType)) return notGrpc(r.headers.httpStatus, r.headers.contentType);
  if (r.trailers) return fromTrailers(r, r.trailers);
  if (r.rstCode !== undefined) {
    return new GrpcError(grpcCodeForRstStream(r.rstCode), `stream terminated by RST_STREAM with error code: ${r.rstCode}`);
  }
  if (r.headers) return new GrpcError(GrpcStatus.INTERNAL, 'server closed the stream without sending trailers');
  return new GrpcError(GrpcStatus.INTERNAL, 'stream closed without a response');
}

function notGrpc(httpStatus: number | undefined, contentType: string | undefined): GrpcError {
  const why = contentType === undefined ? 'malformed header: missing HTTP content-type' : `received unexpected content-type ${JSON.stringify(contentType.slice(0, 100))}`;
  if (httpStatus === undefined) return new GrpcError(GrpcStatus.INTERNAL, `malformed header: missing HTTP status; ${why}`);
  return new GrpcError(grpcCodeForHttpStatus(httpStatus), `${unexpectedHttpStatus(httpStatus)}; ${why}`);
}

/**
 * Reason phrases of the statuses a gRPC client meets from proxies and non-gRPC servers.
 * A local table: node:http's STATUS_CODES would load all of node:http (~5 MiB of RSS).
 */
const REASONS: Readonly<Record<number, string>> = {
  200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

function unexpectedHttpStatus(httpStatus: number): string {
  const reason = REASONS[httpStatus];
  return `unexpected HTTP status code received from server: ${httpStatus}${reason ? ` (${reason})` : ''}`;
}

function fromTrailers(r: ResponseSummary, trailers: NonNullable<ResponseSummary['trailers']>): GrpcError | undefined {
  const httpStatus = r.headers?.httpStatus;
  if (trailers.status === undefined) {
    // http-grpc-status-mapping.md: the HTTP status counts only when grpc-status is absent.
    if (httpStatus !== undefined && httpStatus !== 200) return new GrpcError(grpcCodeForHttpStatus(httpStatus), unexpectedHttpStatus(httpStatus));
    return new GrpcError(GrpcStatus.UNKNOWN, 'the server ended the call without a grpc-status');
  }
  if (!/^[0-9]{1,10}$/.test(trailers.status)) {
    return new GrpcError(GrpcStatus.UNKNOWN, `malformed grpc-status: ${JSON.stringify(trailers.status.slice(0, 20))}`);
  }
  const code = Number(trailers.status);
  if (code !== GrpcStatus.OK) return new GrpcError(code, decodeGrpcMessage(trailers.message ?? ''));
  if (r.pendingBytes > 0) return new GrpcError(GrpcStatus.INTERNAL, `the response ended inside a message (${r.pendingBytes} bytes of it received)`);
  if (r.messages === 0) return new GrpcError(GrpcStatus.INTERNAL, 'cardinality violation: received no response message from non-server-streaming RPC');
  if (r.messages > 1) {
    return new GrpcError(GrpcStatus.INTERNAL, 'cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message');
  }
  return undefined;
}
