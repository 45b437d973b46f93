// What went wrong talking to Vault, as a gRPC code the driver (and kubelet's events)
// understand. node-vault rejects with its ApiResponseError for an HTTP status other than
// 200/204 (`response.statusCode`, `response.body`) and passes axios errors through for
// everything else; axios errors carry the request config, headers and so the token, so
// they are never logged or wrapped whole: only the fields read below leave this module.
// Messages carry no "vault provider:" prefix: the provider adds it, with the object.
// Vault's own error text is shown (cut and escaped) only for logins and 400s: it names
// claims, roles and parameters there, never a secret value.
import { SscError } from '../../lib/errors.js';
import { printable, quoted } from '../../lib/untrusted-text.js';
import { invalidParameterOf } from '../framework/parameter-errors.js';

/** A bad SecretProviderClass parameter of the vault provider (providers/framework/parameter-errors.ts). */
export const invalidParameter = invalidParameterOf('vault');

/** A failed Vault call, reduced to what may be shown. */
export type VaultFailure =
  | { readonly type: 'status'; readonly status: number; readonly errors: readonly string[]; readonly body: unknown }
  | { readonly type: 'network'; readonly code: string; readonly message: string }
  | { readonly type: 'tls'; readonly code: string; readonly message: string }
  | { readonly type: 'timeout'; readonly ms: number }
  /** HTTP 429: Vault (a rate-limit quota) asked for fewer requests; `retryAfterMs` from its Retry-After. */
  | { readonly type: 'throttled'; readonly retryAfterMs: number | undefined; readonly errors: readonly string[] }
  /** A redirect not followed: to another origin (`target`), a second one, or with no usable Location. */
  | {
      readonly type: 'redirect';
      readonly status: number;
      readonly target: string | undefined;
      readonly why: 'other-origin' | 'repeated' | 'no-location';
    }
  /** An answer longer than `limit` bytes. */
  | { readonly type: 'too-large'; readonly limit: number }
  | { readonly type: 'deadline' };

/** What the provider was doing, for the message. */
export interface VaultOperation {
  /** `renew`: PUT sys/leases/renew of a lease this provider issued (lease-policy.ts). */
  readonly action: 'login' | 'read' | 'mount-lookup' | 'renew';
  /** The API path (after /v1/) called. */
  readonly path: string;
  readonly roleName: string;
  readonly vaultAddress: string;
  readonly vaultNamespace: string | undefined;
}

/** What a 403 denied, per action (a login's 403 is answered above). */
const ACTION_TEXT: Readonly<Record<VaultOperation['action'], string>> = {
  login: 'logging in at',
  read: 'reading',
  'mount-lookup': 'looking up the mount of',
  renew: 'renewing a lease at',
};

/** Error codes of Node's TLS layer (certificate checks, handshake alerts). */
const TLS_CODE = /CERT|SSL|TLS|SIGNATURE|EPROTO|ISSUER/;

/** `err` (from node-vault or axios) reduced to a VaultFailure; `timeoutMs` is the timeout the request had. */
export function failureOf(err: unknown, timeoutMs: number): VaultFailure {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    response?: { statusCode?: unknown; body?: unknown };
    code?: unknown;
    message?: unknown;
  };
  if (e.response && typeof e.response.statusCode === 'number') {
    const body = e.response.body as { errors?: unknown } | undefined;
    const errors = Array.isArray(body?.errors) ? body.errors.filter((x): x is string => typeof x === 'string') : [];
    return { type: 'status', status: e.response.statusCode, errors, body: e.response.body };
  }
  const code = typeof e.code === 'string' ? e.code : 'error';
  const message = typeof e.message === 'string' ? e.message : '';
  if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /^timeout of \d+ms exceeded/.test(message))
    return { type: 'timeout', ms: timeoutMs };
  if (TLS_CODE.test(code)) return { type: 'tls', code, message };
  return { type: 'network', code, message };
}

function vaultText(errors: readonly string[]): string {
  const text = errors.join('; ').trim();
  return text === '' ? '' : `: ${printable(text, 300)}`;
}

/** The Mount-level error for a failed Vault call. Messages name the path, role and address; never a token or value. */
export function vaultError(failure: VaultFailure, op: VaultOperation): SscError {
  const at = `Vault at ${printable(op.vaultAddress, 200)}${op.vaultNamespace ? ` (namespace ${quoted(op.vaultNamespace, 64)})` : ''}`;
  const path = quoted(op.path, 160);
  const role = quoted(op.roleName, 64);
  switch (failure.type) {
    case 'deadline':
      return new SscError(
        'deadline-exceeded',
        `the Mount's deadline passed before ${at} answered (${op.action} ${path})`,
        { reason: 'VaultTimeout' },
      );
    case 'timeout':
      return new SscError('deadline-exceeded', `${at} did not answer ${op.action} ${path} within ${failure.ms} ms`, {
        reason: 'VaultTimeout',
      });
    case 'tls':
      return new SscError(
        'unavailable',
        `TLS with ${at} failed (${printable(failure.code, 64)}): ` +
          `${printable(failure.message, 300)}; check vaultCACertPath, vaultTLSServerName and the ` +
          `client certificate`,
        { reason: 'VaultTLSError' },
      );
    case 'network':
      return new SscError('unavailable', `cannot reach ${at} (${printable(failure.code, 64)})`, {
        reason: 'VaultUnreachable',
      });
    case 'redirect':
      return redirectError(failure, op, at, path);
    case 'too-large':
      return new SscError(
        'resource-exhausted',
        `${at} answered ${op.action} ${path} with more than ${failure.limit} bytes (--vault-max-response-bytes)`,
        { reason: 'VaultResponseTooLarge' },
      );
    case 'throttled':
      return throttledError(failure, op, at, path);
    case 'status':
      return statusError(failure, op, at, path, role);
  }
}

function redirectError(
  failure: Extract<VaultFailure, { type: 'redirect' }>,
  op: VaultOperation,
  at: string,
  path: string,
): SscError {
  const what = `${at} redirected ${op.action} ${path} (HTTP ${failure.status})`;
  const target = printable(failure.target ?? '', 200);
  const message =
    failure.why === 'other-origin'
      ? `${what} to another origin, ${target}: not followed, as the Vault token or the login's ` +
        `service-account token would go there; set vaultAddress to the node that answers (the ` +
        `active one, or an address that reaches it)`
      : failure.why === 'repeated'
        ? `${what} a second time, to ${target}: only one redirect is followed`
        : `${what} without a usable Location`;
  return new SscError('unavailable', message, { reason: 'VaultRedirectRefused' });
}

/** HTTP 429: RESOURCE_EXHAUSTED, carrying Vault's Retry-After to the driver as gRPC pushback. */
function throttledError(
  failure: { readonly retryAfterMs?: number | undefined; readonly errors: readonly string[] },
  op: VaultOperation,
  at: string,
  path: string,
): SscError {
  const { retryAfterMs } = failure;
  const wait = retryAfterMs === undefined ? '' : `; it asked to wait ${Math.ceil(retryAfterMs / 1000)}s`;
  return new SscError(
    'resource-exhausted',
    `${at} throttled ${op.action} ${path} (HTTP 429)${wait}${vaultText(failure.errors)}`,
    {
      reason: 'VaultThrottled',
      retryAfterMs,
    },
  );
}

function statusError(
  failure: Extract<VaultFailure, { type: 'status' }>,
  op: VaultOperation,
  at: string,
  path: string,
  role: string,
): SscError {
  const { status } = failure;
  if (op.action === 'login' && (status === 400 || status === 401 || status === 403)) {
    return new SscError(
      'permission-denied',
      `${at} refused the login at ${path} as role ${role} (HTTP ${status})${vaultText(failure.errors)}`,
      { reason: 'VaultLoginFailed' },
    );
  }
  if (op.action === 'login' && status === 404) {
    // Nothing is mounted there: a configuration error, not a missing secret.
    const mount = op.path.replace(/^auth\//, '').replace(/\/login$/, '');
    return new SscError(
      'invalid-argument',
      `${at} has no auth method at ${quoted(mount, 120)} (login ${path} answered HTTP 404): check vaultAuthMountPath (or --vault-mount)`,
      { reason: 'VaultAuthMountNotFound' },
    );
  }
  if (status === 403) {
    return new SscError(
      'permission-denied',
      `${at} denied ${ACTION_TEXT[op.action]} ${path} to role ${role} (HTTP 403): the role's policies must allow it`,
      { reason: 'VaultPermissionDenied' },
    );
  }
  if (status === 404) {
    return new SscError('not-found', `secret ${path} not found in ${at}`, { reason: 'SecretNotFound' });
  }
  if (status === 503) {
    return new SscError('unavailable', `${at} is sealed or not ready (HTTP 503) for ${path}`, {
      reason: 'VaultSealed',
    });
  }
  if (status === 429) return throttledError(failure, op, at, path);
  if (status >= 500) {
    return new SscError('unavailable', `${at} failed ${op.action} ${path} (HTTP ${status})`, {
      reason: 'VaultServerError',
    });
  }
  if (status === 400 || status === 405) {
    return new SscError(
      'invalid-argument',
      `${at} refused ${op.action} ${path} as a bad request (HTTP ${status})${vaultText(failure.errors)}`,
      { reason: 'VaultBadRequest' },
    );
  }
  return new SscError('unavailable', `${at} answered ${op.action} ${path} with HTTP ${status}`, {
    reason: 'VaultServerError',
  });
}
