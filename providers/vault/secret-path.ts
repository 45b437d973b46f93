// `secretPath` as HashiCorp's provider reads it (internal/client/client.go,
// generateSecretRequest and ensureV1Prefix): an optional `/v1/` or `v1/` prefix (a bare
// leading `/` too) before the Vault API path, and an optional `?query` parsed with Go's
// url.ParseQuery and sent with the request, e.g. `secret/data/db?version=3`.

/** A `secretPath` split into what a request needs. */
export interface SecretPath {
  /** The API path after `/v1/`, without the query: `secret/data/db`. */
  readonly path: string;
  /** `version=N` from the query: a KV v2 version (0 means the latest); undefined when absent. */
  readonly version: number | undefined;
  /** Every other query parameter, in order, decoded; sent with the request as HashiCorp's provider does. */
  readonly query: readonly (readonly [string, string])[];
}

/** Control characters and `#`: neither belongs in a Vault API path or query. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f#]/;

/** One `key=value` part of a query as Go's url.ParseQuery decodes it; throws on a bad `%` escape. */
function decodeQueryPart(part: string): string {
  return decodeURIComponent(part.replace(/\+/g, ' '));
}

/**
 * Splits `secretPath` into its API path, KV version and other query parameters. Returns
 * a problem (for an INVALID_ARGUMENT naming the field) instead when it is empty, has an
 * empty, `.` or `..` segment, a control character or `#`, a bad `%` escape, a `;` in the
 * query (Go refuses it), or a `version` that is not a non-negative integer.
 */
export function parseSecretPath(secretPath: string): SecretPath | { readonly problem: string } {
  if (FORBIDDEN.test(secretPath)) return { problem: 'has a control character or "#"' };
  const q = secretPath.indexOf('?');
  let path = q >= 0 ? secretPath.slice(0, q) : secretPath;
  const rawQuery = q >= 0 ? secretPath.slice(q + 1) : '';
  path = path.replace(/^\/?v1\//, '').replace(/^\/+/, '');
  if (path === '') return { problem: 'names no path' };
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    return { problem: 'has an empty, "." or ".." segment' };
  let version: number | undefined;
  const query: [string, string][] = [];
  for (const part of rawQuery === '' ? [] : rawQuery.split('&')) {
    if (part === '') continue;
    if (part.includes(';')) return { problem: 'has a ";" in its query' };
    const eq = part.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = decodeQueryPart(eq >= 0 ? part.slice(0, eq) : part);
      value = decodeQueryPart(eq >= 0 ? part.slice(eq + 1) : '');
    } catch {
      return { problem: 'has a bad "%" escape in its query' };
    }
    if (key === 'version') {
      if (!/^[0-9]{1,15}$/.test(value)) return { problem: 'has a version that is not a non-negative integer' };
      if (version !== undefined) return { problem: 'has more than one version' };
      version = Number(value);
    } else {
      query.push([key, value]);
    }
  }
  return { path, version, query };
}
