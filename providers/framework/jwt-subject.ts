// The pod's service-account token must belong to the service account the Mount's
// attributes name: the identity (and so the shared Vault token) is keyed by those
// attributes, so a token of another account would be answered from a session it could
// not log in to. Only the payload's `sub` is read, without verifying the signature:
// the secret store (Vault, Entra ID) verifies the token whenever it is used to log in;
// this check only keeps a session's token to the account it was obtained for. The
// token is never echoed.
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';

/** The `sub` Kubernetes puts in a service account's tokens. */
export function serviceAccountSubject(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The `sub` claim of `jwt`'s payload, or undefined when it is not a JWT with a string `sub`. */
export function jwtSubject(jwt: string): string | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3 || parts[1] === undefined || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    const sub = typeof payload === 'object' && payload !== null ? (payload as { sub?: unknown }).sub : undefined;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Throws FAILED_PRECONDITION (`ServiceAccountTokenMismatch`) unless `jwt`'s `sub` is
 * the service account `namespace`/`name`; the message, prefixed `<provider> provider:`,
 * names the expected subject only.
 */
export function checkTokenSubject(jwt: string, namespace: string, name: string, provider: string): void {
  const expected = serviceAccountSubject(namespace, name);
  const sub = jwtSubject(jwt);
  if (sub === expected) return;
  const why = sub === undefined ? 'is not a JWT with a "sub" claim' : `has sub ${quoted(sub, 120)}`;
  throw new SscError(
    'failed-precondition',
    `${provider} provider: the pod's service-account token ${why}, not ${quoted(expected, 120)} ` +
      `of csi.storage.k8s.io/pod.namespace and csi.storage.k8s.io/serviceAccount.name`,
    { reason: 'ServiceAccountTokenMismatch' },
  );
}
