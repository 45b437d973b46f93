// Turns what the Azure SDK throws into SscErrors (gRPC codes) at the edge. Messages are
// built from status codes and error codes only, never from the SDK's or the service's
// message text: Key Vault's messages name principals and Entra's echo request details,
// and neither may carry a token or a value into a log, event or gRPC status.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import { invalidParameterOf } from '../framework/parameter-errors.js';

/** A bad SecretProviderClass parameter of the azure provider (providers/framework/parameter-errors.ts). */
export const invalidParameter = invalidParameterOf('azure');

/** Which identity a Mount used, in words for messages (never its secret). */
export type IdentityKind = 'workload identity' | 'service principal' | 'managed identity';

/** What was being read when an error happened. */
export interface ReadContext {
  readonly objectType: 'secret' | 'key' | 'cert';
  readonly objectName: string;
  readonly objectVersion: string;
  readonly keyvaultName: string;
  readonly identityKind: IdentityKind;
}

interface ErrorShape {
  readonly name?: unknown;
  readonly statusCode?: unknown;
  readonly code?: unknown;
  readonly errorResponse?: { readonly error?: unknown; readonly errorDescription?: unknown };
}

const SAFE_CODE = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'REQUEST_SEND_ERROR',
]);

function shape(err: unknown): ErrorShape {
  return typeof err === 'object' && err !== null ? (err as ErrorShape) : {};
}

/** The service's error code (e.g. `SecretNotFound`, `Forbidden`) when it is a plain identifier. */
export function serviceCode(err: unknown): string | undefined {
  const code = shape(err).code;
  return typeof code === 'string' && SAFE_CODE.test(code) ? code : undefined;
}

/** The AADSTS number at the start of an Entra error description (`AADSTS70021`), if any. */
export function aadstsCode(description: unknown): string | undefined {
  return typeof description === 'string' ? /^(AADSTS[0-9]{1,9})\b/.exec(description)?.[1] : undefined;
}

function objectText(c: ReadContext): string {
  const version = c.objectVersion === '' ? '' : ` version ${quoted(c.objectVersion, 64)}`;
  return `${c.objectType} ${quoted(c.objectName, 128)}${version} in key vault ${quoted(c.keyvaultName, 32)}`;
}

/** Entra error codes that mean "try later", not "refused". */
const TRANSIENT_ENTRA = new Set(['temporarily_unavailable', 'server_error', 'network_error', 'request_timeout']);

/** Entra's OAuth error and AADSTS number from an identity error: `errorResponse`, or msal's message `<error>: … AADSTS<n>: …`. */
function entraError(e: ErrorShape, message: string): { status: number; error: string; aadsts: string | undefined } {
  const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
  if (e.errorResponse !== undefined) {
    const error =
      typeof e.errorResponse.error === 'string' && SAFE_CODE.test(e.errorResponse.error)
        ? e.errorResponse.error
        : 'unknown';
    return { status, error, aadsts: aadstsCode(e.errorResponse.errorDescription) };
  }
  const error = /^([a-z_]{1,64}):/.exec(message)?.[1] ?? 'unknown';
  return { status, error, aadsts: /\b(AADSTS[0-9]{1,9})\b/.exec(message)?.[1] };
}

function tokenError(err: unknown, c: ReadContext): SscError | undefined {
  const e = shape(err);
  if (e.name === 'CredentialUnavailableError') {
    return new SscError(
      'unavailable',
      `azure provider: no ${c.identityKind} token for ${objectText(c)}: the token endpoint is unavailable`,
      { reason: 'TokenUnavailable' },
    );
  }
  // @azure/identity 4.x raises what Entra answered as AuthenticationError (with the
  // response) or, through msal, as AuthenticationRequiredError (with msal's message).
  if (e.name !== 'AuthenticationError' && e.name !== 'AuthenticationRequiredError') return undefined;
  const message = err instanceof Error ? err.message : '';
  const { status, error, aadsts } = entraError(e, message);
  const detail = `${status === 0 ? '' : `HTTP ${status}, `}${error}${aadsts ? ` ${aadsts}` : ''}`;
  if (status >= 500 || status === 429 || TRANSIENT_ENTRA.has(error)) {
    return new SscError(
      'unavailable',
      `azure provider: Microsoft Entra ID could not issue a ${c.identityKind} token for ${objectText(c)} (${detail})`,
      { reason: 'TokenUnavailable' },
    );
  }
  return new SscError(
    'permission-denied',
    `azure provider: Microsoft Entra ID refused the ${c.identityKind} (${detail}) for ${objectText(c)}`,
    { reason: 'AuthenticationFailed' },
  );
}

/**
 * The SscError for an error the SDK threw while reading `c`: 404 → NOT_FOUND naming
 * the object and vault; 401/403 → PERMISSION_DENIED naming the identity kind; 429 (still
 * throttled after throttle-retry.ts waited) → RESOURCE_EXHAUSTED, which the driver does not
 * retry at once; 5xx and network failures → UNAVAILABLE; a token Entra refused → PERMISSION_DENIED.
 * An SscError passes through.
 */
export function keyVaultError(err: unknown, c: ReadContext): SscError {
  if (err instanceof SscError) return err;
  const token = tokenError(err, c);
  if (token) return token;
  const e = shape(err);
  if (e.name === 'AbortError')
    return new SscError(
      'deadline-exceeded',
      `azure provider: reading ${objectText(c)} was cancelled (the Mount's deadline passed)`,
      { reason: 'KeyVaultTimeout' },
    );
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const code = serviceCode(err);
  const said = `HTTP ${status ?? '-'}${code ? `, ${code}` : ''}`;
  if (status === 404)
    return new SscError('not-found', `azure provider: ${objectText(c)} not found (${said})`, {
      reason: 'KeyVaultObjectNotFound',
    });
  if (status === 401 || status === 403) {
    return new SscError(
      'permission-denied',
      `azure provider: key vault ${quoted(c.keyvaultName, 32)} refused the ${c.identityKind} for ${objectText(c)} (${said})`,
      { reason: 'KeyVaultAccessDenied' },
    );
  }
  if (status === 429)
    return new SscError(
      'resource-exhausted',
      `azure provider: key vault ${quoted(c.keyvaultName, 32)} throttled reading ${objectText(c)} (${said})`,
      { reason: 'KeyVaultThrottled' },
    );
  if (status !== undefined && status >= 500)
    return new SscError(
      'unavailable',
      `azure provider: key vault ${quoted(c.keyvaultName, 32)} failed reading ${objectText(c)} (${said})`,
      { reason: 'KeyVaultUnavailable' },
    );
  if (status !== undefined)
    return new SscError(
      'invalid-argument',
      `azure provider: key vault ${quoted(c.keyvaultName, 32)} rejected reading ${objectText(c)} (${said})`,
      { reason: 'KeyVaultRequestRejected' },
    );
  if (
    typeof e.code === 'string' &&
    (NETWORK_CODES.has(e.code) || /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(e.code))
  ) {
    return new SscError(
      'unavailable',
      `azure provider: key vault ${quoted(c.keyvaultName, 32)} is unreachable reading ${objectText(c)} (${e.code})`,
      { reason: 'KeyVaultUnreachable' },
    );
  }
  return new SscError(
    'internal',
    `azure provider: reading ${objectText(c)} failed (${e.name === undefined ? 'error' : quoted(String(e.name), 40)})`,
    { reason: 'KeyVaultError' },
  );
}
