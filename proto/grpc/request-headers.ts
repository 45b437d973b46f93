// What a server makes of a request's headers before reading its body, in grpc-go's order
// and with its answers (internal/transport/http2_server.go operateHeaders, server.go
// handleStream): a wrong content-type is HTTP 415 (PROTOCOL-HTTP2.md: so plain HTTP
// clients do not take the error for success), a malformed grpc-timeout 400, a method
// other than POST 405; an unknown path or message encoding is a gRPC status (HTTP 200).
import type { IncomingHttpHeaders } from 'node:http2';
import { messageEncoding, type MessageEncoding } from './compression.js';
import { headerValue, isGrpcContentType } from './headers.js';
import { GrpcStatus, type GrpcStatusCode } from './status.js';
import { parseGrpcTimeout } from './timeout.js';

/** A request refused from its headers alone: the HTTP status and the gRPC status to answer with. */
export interface HeaderRejection {
  readonly httpStatus: number;
  readonly code: GrpcStatusCode;
  readonly message: string;
}

/** A request whose headers are acceptable: its method path, timeout (ms, if any) and grpc-encoding. */
export interface AcceptedRequest {
  readonly path: string;
  readonly timeoutMs: number | undefined;
  readonly encoding: MessageEncoding;
}

/** A client-chosen header value for a message: escaped like a JSON string and bounded, without quotes. */
export function shown(value: string): string {
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value).slice(1, -1);
}

function quoted(value: string): string {
  return `"${shown(value)}"`;
}

/** Accepts or refuses a request from its headers; `describeUnknownPath` gives the message for a :path no handler serves. */
export function checkRequestHeaders(headers: IncomingHttpHeaders, describeUnknownPath: (path: string) => string | undefined): AcceptedRequest | HeaderRejection {
  const contentType = headerValue(headers['content-type']);
  if (!isGrpcContentType(contentType)) {
    return { httpStatus: 415, code: GrpcStatus.INVALID_ARGUMENT, message: `invalid gRPC request content-type ${quoted(contentType ?? '')}` };
  }
  const timeoutHeader = headerValue(headers['grpc-timeout']);
  const timeoutMs = timeoutHeader === undefined ? undefined : parseGrpcTimeout(timeoutHeader);
  if (timeoutHeader !== undefined && timeoutMs === undefined) {
    return { httpStatus: 400, code: GrpcStatus.INTERNAL, message: `malformed grpc-timeout: ${quoted(timeoutHeader)}` };
  }
  const method = headerValue(headers[':method']) ?? '';
  if (method !== 'POST') {
    return { httpStatus: 405, code: GrpcStatus.INTERNAL, message: `Received a HEADERS frame with :method ${quoted(method)} which should be POST` };
  }
  const path = headerValue(headers[':path']) ?? '';
  const unknown = describeUnknownPath(path);
  if (unknown !== undefined) return { httpStatus: 200, code: GrpcStatus.UNIMPLEMENTED, message: unknown };
  const encodingHeader = headerValue(headers['grpc-encoding']);
  const encoding = messageEncoding(encodingHeader);
  if (encoding === undefined) {
    return { httpStatus: 200, code: GrpcStatus.UNIMPLEMENTED, message: `grpc: Decompressor is not installed for grpc-encoding ${quoted(encodingHeader ?? '')}` };
  }
  return { path, timeoutMs, encoding };
}

/**
 * grpc-go's text for a path no handler serves: "malformed method name" when it is not
 * /service/method, "unknown service S" when no method of S is served, else "unknown method M
 * for service S". Undefined when `served` has the path.
 */
export function unknownPathMessage(path: string, served: ReadonlySet<string>): string | undefined {
  if (served.has(path)) return undefined;
  const slash = path.lastIndexOf('/');
  if (!path.startsWith('/') || slash <= 0) return `malformed method name: ${quoted(path)}`;
  const service = path.slice(1, slash);
  const method = path.slice(slash + 1);
  for (const known of served) {
    if (known.startsWith(`/${service}/`)) return `unknown method ${shown(method)} for service ${shown(service)}`;
  }
  return `unknown service ${shown(service)}`;
}
