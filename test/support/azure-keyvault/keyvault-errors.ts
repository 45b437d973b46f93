// Stand-in for Azure Key Vault's error responses (test only; no real Key Vault can run here,
// see docs/conformance.md). Shapes follow the Key Vault REST reference (`KeyVaultError`:
// `{ error: { code, message, innererror? } }`); message texts as the real service words them
// in public bug reports (SecretNotFound, SecretDisabled, AccessDenied, AKV10000, Throttled,
// BadParameter "specified version"). Texts marked "unverified" could not be checked here.
import type { ObjectKind } from './vault-store.js';

/** A Key Vault error answer: status, body and extra headers. */
export interface KeyVaultErrorReply {
  readonly status: number;
  readonly body: { error: { code: string; message: string; innererror?: { code: string } } };
  readonly headers?: Record<string, string>;
}

function reply(
  status: number,
  code: string,
  message: string,
  inner?: string,
  headers?: Record<string, string>,
): KeyVaultErrorReply {
  return {
    status,
    body: { error: { code, message, ...(inner === undefined ? {} : { innererror: { code: inner } }) } },
    ...(headers ? { headers } : {}),
  };
}

const SINGULAR: Record<ObjectKind, string> = { secrets: 'secret', keys: 'key', certificates: 'certificate' };
const NOT_FOUND_CODE: Record<ObjectKind, string> = {
  secrets: 'SecretNotFound',
  keys: 'KeyNotFound',
  certificates: 'CertificateNotFound',
};

/** 404 for an unknown object or version (`name` or `name/version`). */
export function notFound(kind: ObjectKind, id: string): KeyVaultErrorReply {
  const what = SINGULAR[kind];
  return reply(
    404,
    NOT_FOUND_CODE[kind],
    `A ${what} with (name/id) ${id} was not found in this key vault. If you recently deleted this ${what} you may be able to recover it using the correct recovery command. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125182`,
  );
}

/** 403 for a read of a disabled version. */
export function disabled(kind: ObjectKind, operation: string): KeyVaultErrorReply {
  const what = SINGULAR[kind];
  return reply(
    403,
    'Forbidden',
    `Operation ${operation} is not allowed on a disabled ${what}.`,
    `${what[0]?.toUpperCase()}${what.slice(1)}Disabled`,
  );
}

/** 403 when the vault's access policies do not give the caller this permission. */
export function accessDenied(
  caller: string,
  kind: ObjectKind,
  operation: string,
  vault: string,
  location: string,
): KeyVaultErrorReply {
  return reply(
    403,
    'Forbidden',
    `The user, group or application '${caller}' does not have ${kind} ${operation} permission on key vault '${vault};location=${location}'. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125287`,
    'AccessDenied',
  );
}

/** 401 with Key Vault's bearer challenge; `detail` is the AKV100xx message. */
export function unauthorized(detail: string, challenge: string): KeyVaultErrorReply {
  return reply(401, 'Unauthorized', detail, undefined, { 'www-authenticate': challenge });
}

/** 400 for a missing api-version (wording unverified) or one the service does not know. */
export function badApiVersion(given: string | undefined, latest: string): KeyVaultErrorReply {
  return given === undefined || given === ''
    ? reply(400, 'BadParameter', 'The api-version query parameter is required.')
    : reply(
        400,
        'BadParameter',
        `The specified version (${given}) is not recognized. Consider using the latest supported version (${latest}).`,
      );
}

/** 400 for a malformed request (invalid object name, maxresults, JSON body). */
export function badParameter(message: string): KeyVaultErrorReply {
  return reply(400, 'BadParameter', message);
}

/** 429 from injected throttling, with Retry-After in seconds. */
export function throttled(retryAfterSeconds: number): KeyVaultErrorReply {
  return reply(
    429,
    'Throttled',
    'Request was not processed because too many requests were received. Reason: VaultRequestTypeLimitReached',
    undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );
}

/** 404/405 for a path or method the API does not have. */
export function noSuchOperation(status: 404 | 405, method: string, path: string): KeyVaultErrorReply {
  return reply(
    status,
    status === 404 ? 'NotFound' : 'MethodNotAllowed',
    `The operation ${method} ${path} is not supported by this Key Vault stand-in (or by Key Vault).`,
  );
}
