/** gRPC status codes (grpc/doc/statuscodes.md). */
export const GrpcStatus = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
});

/** One of the GrpcStatus codes (0–16); a peer may send others, which callers treat as UNKNOWN. */
export type GrpcStatusCode = number;

/**
 * A call that ended with a non-OK status: thrown by the client for every failure
 * (transport ones included), and thrown by a handler to answer with exactly this status.
 * `details` is the grpc-message, already percent-decoded.
 */
export class GrpcError extends Error {
  readonly code: GrpcStatusCode;
  readonly details: string;

  constructor(code: GrpcStatusCode, details: string) {
    super(details);
    this.name = 'GrpcError';
    this.code = code;
    this.details = details;
  }
}

const NAME_BY_CODE: ReadonlyMap<number, string> = new Map(Object.entries(GrpcStatus).map(([name, code]) => [code, name]));

/** The name of a status code ("UNAVAILABLE"), or the number as text for a code outside 0–16. */
export function grpcStatusName(code: GrpcStatusCode): string {
  return NAME_BY_CODE.get(code) ?? String(code);
}
