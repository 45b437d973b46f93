/**
 * The contract between the gRPC transport (proto/grpc) and the message codecs
 * (proto/wire): a method is its HTTP/2 path and the codecs of its two messages. The
 * transport moves bytes; only the codecs know protobuf.
 */

/** Encodes and decodes one protobuf message type. `decode` throws on malformed bytes. */
export interface MessageCodec<T> {
  encode(message: T): Uint8Array;
  decode(bytes: Uint8Array): T;
}

/** A unary gRPC method: `/package.Service/Method` and its request and response codecs. */
export interface UnaryMethod<Req, Res> {
  readonly path: string;
  readonly request: MessageCodec<Req>;
  readonly response: MessageCodec<Res>;
}
