import { status as GrpcStatus } from '@grpc/grpc-js';

/** What went wrong, independent of transport; one table maps each kind to a gRPC code. */
export type ErrorKind =
  | 'invalid-argument'
  | 'not-found'
  | 'already-exists'
  | 'unavailable'
  | 'deadline-exceeded'
  | 'resource-exhausted'
  | 'aborted'
  | 'failed-precondition'
  | 'permission-denied'
  | 'unauthenticated'
  | 'unimplemented'
  | 'internal';

const GRPC_CODE_BY_KIND: Readonly<Record<ErrorKind, GrpcStatus>> = Object.freeze({
  'invalid-argument': GrpcStatus.INVALID_ARGUMENT,
  'not-found': GrpcStatus.NOT_FOUND,
  'already-exists': GrpcStatus.ALREADY_EXISTS,
  unavailable: GrpcStatus.UNAVAILABLE,
  'deadline-exceeded': GrpcStatus.DEADLINE_EXCEEDED,
  'resource-exhausted': GrpcStatus.RESOURCE_EXHAUSTED,
  aborted: GrpcStatus.ABORTED,
  'failed-precondition': GrpcStatus.FAILED_PRECONDITION,
  'permission-denied': GrpcStatus.PERMISSION_DENIED,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  unimplemented: GrpcStatus.UNIMPLEMENTED,
  internal: GrpcStatus.INTERNAL,
});

const KIND_BY_GRPC_CODE: ReadonlyMap<number, ErrorKind> = new Map(
  Object.entries(GRPC_CODE_BY_KIND).map(([kind, code]) => [code, kind as ErrorKind]),
);

/**
 * The one error type of the project. `reason` is a short CamelCase word used as the
 * metric `error_type` label and event reason; `message` must never contain secret data.
 */
export class SscError extends Error {
  readonly kind: ErrorKind;
  readonly reason: string;
  /**
   * How long the caller should wait before trying again, when the failing side said so (a
   * vault's Retry-After; gRPC's `grpc-retry-pushback-ms` between provider and driver).
   */
  readonly retryAfterMs: number | undefined;

  constructor(kind: ErrorKind, message: string, options: SscErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SscError';
    this.kind = kind;
    this.reason = options.reason ?? defaultReason(kind);
    this.retryAfterMs = options.retryAfterMs;
  }

  /** The same error with `prefix: ` in front of its message (kind, reason and retry-after kept). */
  withContext(prefix: string): SscError {
    return new SscError(this.kind, `${prefix}: ${this.message}`, this.options());
  }

  /** What a copy of this error keeps: reason, cause and retry-after. */
  options(): SscErrorOptions {
    return { reason: this.reason, cause: this.cause, retryAfterMs: this.retryAfterMs };
  }
}

/** An SscError's optional parts. */
export interface SscErrorOptions {
  readonly reason?: string | undefined;
  readonly cause?: unknown;
  readonly retryAfterMs?: number | undefined;
}

function defaultReason(kind: ErrorKind): string {
  return kind
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** The gRPC status code for an error kind. */
export function grpcCodeOf(kind: ErrorKind): GrpcStatus {
  return GRPC_CODE_BY_KIND[kind];
}

/** The error kind for a gRPC status code; codes without a kind (UNKNOWN, CANCELLED, …) are internal. */
export function kindOfGrpcCode(code: number): ErrorKind {
  if (code === GrpcStatus.CANCELLED) return 'aborted';
  return KIND_BY_GRPC_CODE.get(code) ?? 'internal';
}

/** Shape of an error from a gRPC client call (grpc-js's ServiceError). */
export interface GrpcCallError {
  code: number;
  details: string;
}

/** True when `err` looks like an error from a gRPC client call. */
export function isGrpcCallError(err: unknown): err is GrpcCallError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'number' &&
    typeof (err as { details?: unknown }).details === 'string'
  );
}

/** Kinds for Node.js filesystem errno codes; anything else is failed-precondition. */
const KIND_BY_ERRNO: Readonly<Record<string, ErrorKind>> = {
  ENOENT: 'not-found',
  ENOTDIR: 'failed-precondition',
  EACCES: 'permission-denied',
  EPERM: 'permission-denied',
  ENOSPC: 'resource-exhausted',
  EDQUOT: 'resource-exhausted',
  EMFILE: 'resource-exhausted',
  ENFILE: 'resource-exhausted',
  EEXIST: 'already-exists',
  EROFS: 'failed-precondition',
  EBUSY: 'unavailable',
  EIO: 'unavailable',
};

/** True for a Node.js system error (`code` like "ENOSPC", `syscall`). */
function isErrnoError(err: unknown): err is NodeJS.ErrnoException & { code: string } {
  return (
    err instanceof Error &&
    typeof (err as NodeJS.ErrnoException).code === 'string' &&
    /^E[A-Z0-9]+$/.test((err as NodeJS.ErrnoException).code as string)
  );
}

/**
 * Translates anything thrown into an SscError. Filesystem errors keep their errno and
 * path (never contents); unknown errors become `internal` with a message that says so
 * and carries no details (they could hold secret data).
 */
export function toSscError(err: unknown): SscError {
  if (err instanceof SscError) return err;
  if (isGrpcCallError(err)) return new SscError(kindOfGrpcCode(err.code), err.details);
  if (isErrnoError(err)) {
    const where = [err.syscall, err.path].filter(Boolean).join(' ');
    return new SscError(
      KIND_BY_ERRNO[err.code] ?? 'failed-precondition',
      `filesystem error ${err.code}${where ? ` (${where})` : ''}`,
      { reason: 'FilesystemError', cause: err },
    );
  }
  return new SscError('internal', 'internal error (a bug): see the driver log', { cause: err });
}
