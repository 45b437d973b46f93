// Header names and values both sides of the transport share (grpc/doc/PROTOCOL-HTTP2.md).

/** The content-type every gRPC request and response carries (no +proto: grpc-go sends it bare). */
export const GRPC_CONTENT_TYPE = 'application/grpc';

/** Message encodings this transport decompresses, as advertised in grpc-accept-encoding. */
export const ACCEPTED_ENCODINGS = 'identity,deflate,gzip';

/**
 * True for a gRPC content-type: "application/grpc" alone or followed by "+subtype" or
 * ";parameters" (grpc-go's rule; "application/grpcx" is not gRPC).
 */
export function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined || !value.startsWith(GRPC_CONTENT_TYPE)) return false;
  const next = value.charAt(GRPC_CONTENT_TYPE.length);
  return next === '' || next === '+' || next === ';';
}

/** One header's value as a string: Node gives repeated headers as arrays (the first one counts). */
export function headerValue(value: string | string[] | number | undefined): string | undefined {
  if (Array.isArray(value)) return value[0];
  return value === undefined ? undefined : String(value);
}
