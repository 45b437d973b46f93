// The exec provider's errors: INVALID_ARGUMENT for a bad class, and one SscError per way a
// helper run can fail. Messages name the object and helper, never a parameter value, a
// token or the helper's output (stderr only through helper-stderr.ts, redacted).
import { invalidParameterOf } from '../framework/parameter-errors.js';

/** A bad SecretProviderClass parameter of the exec provider (providers/framework/parameter-errors.ts). */
export const invalidParameter = invalidParameterOf('exec');

/** What a helper's exit status means to the driver and the operator (documented in docs/providers/exec.md). */
export interface ExitMeaning {
  readonly kind: 'not-found' | 'permission-denied' | 'unavailable' | 'failed-precondition';
  readonly reason: string;
}

/** sysexits.h EX_NOINPUT: the object does not exist in the store. */
export const EXIT_NOT_FOUND = 66;
/** sysexits.h EX_TEMPFAIL: try again later (the store is down or busy). */
export const EXIT_TEMPORARY_FAILURE = 75;
/** sysexits.h EX_NOPERM: the store refused the node or the pod. */
export const EXIT_PERMISSION_DENIED = 77;
/** `version` only: the helper has no version support; the provider digests the content instead. */
export const EXIT_NO_VERSION_SUPPORT = 3;

/**
 * The gRPC kind and metric reason of a helper's non-zero exit: sysexits.h's 66 → NOT_FOUND,
 * 75 → UNAVAILABLE (the driver retries it), 77 → PERMISSION_DENIED; any other code or a
 * signal → FAILED_PRECONDITION `HelperFailed`.
 */
export function exitMeaning(code: number | null): ExitMeaning {
  if (code === EXIT_NOT_FOUND) return { kind: 'not-found', reason: 'HelperObjectNotFound' };
  if (code === EXIT_TEMPORARY_FAILURE) return { kind: 'unavailable', reason: 'HelperTemporaryFailure' };
  if (code === EXIT_PERMISSION_DENIED) return { kind: 'permission-denied', reason: 'HelperPermissionDenied' };
  return { kind: 'failed-precondition', reason: 'HelperFailed' };
}
