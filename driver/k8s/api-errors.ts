import { SscError, type ErrorKind } from '../../lib/errors.js';
import { describeRight, rightOfRequest, rolesGranting, type DriverFeature } from './api-rights.js';
import { KubeCredentialError } from './client/credentials.js';
import { KubeApiError } from './client/kube-api.js';

/** Network errno codes that mean the API server could not be reached (ETIMEDOUT: no answer in time). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** The HTTP status of a KubeApiError, or undefined for other errors. */
export function httpStatusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/** The API server's Status message of a KubeApiError ('' when there is none): what client-go's StatusError prints. */
export function statusMessage(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const message = (parsed as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

function errnoOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && typeof e === 'object' && e !== null; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function kindOfHttpStatus(status: number): ErrorKind {
  if (status === 404) return 'not-found';
  if (status === 403) return 'permission-denied';
  if (status === 401) return 'unauthenticated';
  if (status === 409) return 'aborted';
  if (status === 400 || status === 422) return 'invalid-argument';
  if (status === 429 || status >= 500) return 'unavailable';
  return 'failed-precondition';
}

/** The API server's wording of an authorization denial (RBAC), as opposed to other 403s (a terminating namespace). */
const AUTHORIZATION_DENIED = /\bcannot [a-z]+ resource\b/;

/**
 * What to add to a 403's message: the right the request needed and the role in deploy/
 * that grants it (`preferred`: the feature that made the call, when several roles grant
 * the right), or a generic hint when the right can't be told.
 */
function forbiddenHint(err: unknown, detail: string, preferred: DriverFeature | undefined): string {
  const right = err instanceof KubeApiError ? rightOfRequest(err.method, err.path, err.watch) : undefined;
  if (!right || (detail !== '' && !AUTHORIZATION_DENIED.test(detail))) return " (check the driver's RBAC)";
  // The object's name only matters where a role grants by name (the CSIDriver).
  const roles = rolesGranting(right, preferred);
  const named = roles.some((r) => r.rights.some((g) => g.name !== undefined && g.resource === right.resource));
  const missing = describeRight(named ? right : { verb: right.verb, group: right.group, resource: right.resource });
  const grant =
    roles.length === 0
      ? 'no role in deploy/ grants it'
      : `granted by ${roles.map((r) => `ClusterRole ${r.role} in ${r.file}`).join(' or ')}`;
  return ` (the driver's RBAC lacks: ${missing}; ${grant})`;
}

/**
 * Translates an error from the Kubernetes client into an SscError at the API edge, so an
 * HTTP 404 never reaches grpc-js as code 404. `what` says what was attempted
 * ("get SecretProviderClass ns/name"); the message carries the API's Status message,
 * never a request or response body. A 403 names the missing right and the deploy/ file
 * whose role grants it; `feature` says which feature made the call, for rights that
 * several roles grant (Secret reads).
 */
export function fromKubeError(err: unknown, what: string, feature?: DriverFeature): SscError {
  if (err instanceof SscError) return err;
  const status = httpStatusOf(err);
  if (status !== undefined) {
    const kind = kindOfHttpStatus(status);
    const full = statusMessage(err);
    const detail = full.slice(0, 300);
    const hint = status === 403 ? forbiddenHint(err, full, feature) : '';
    return new SscError(kind, `Kubernetes API refused to ${what}: HTTP ${status}${detail ? ` ${detail}` : ''}${hint}`, {
      reason: 'KubernetesAPIError',
      cause: err,
    });
  }
  if (err instanceof KubeCredentialError) {
    return new SscError('unavailable', `Kubernetes API call failed while trying to ${what}: ${err.message}`, {
      reason: 'KubernetesAPIError',
      cause: err,
    });
  }
  const errno = errnoOf(err);
  if (errno !== undefined && UNREACHABLE.has(errno)) {
    return new SscError('unavailable', `Kubernetes API unreachable while trying to ${what} (${errno})`, {
      reason: 'KubernetesAPIUnavailable',
      cause: err,
    });
  }
  // Other codes are TLS verdicts and the like (UNABLE_TO_VERIFY_LEAF_SIGNATURE, ERR_TLS_CERT_ALTNAME_INVALID).
  return new SscError(
    'unavailable',
    `Kubernetes API call failed while trying to ${what}${errno ? ` (${errno})` : ''}`,
    { reason: 'KubernetesAPIError', cause: err },
  );
}
