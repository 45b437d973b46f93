// What a log line may show of a value: secret values replaced by "[REDACTED]" under the
// keys that hold them, Buffers as a byte count, cycles cut. `redact` makes the redacted
// copy; `redactedJson` writes the same copy's JSON text in one pass (keys sorted, the line
// shape docs/configuration.md#logs shows) without building the copy, and never throws.

/**
 * Keys whose values are replaced by "[REDACTED]" wherever they appear in a log entry:
 * they hold secret values (a CSI request's `secrets`, tokens, a Secret's `data`, file
 * contents, keys). Names are not values: `secret` ("ns/name" of a synced Secret),
 * `secretName` and `secretProviderClass` are logged as they are (docs/configuration.md#logs).
 */
const SENSITIVE_KEYS = new Set([
  'secrets', 'token', 'tokens', 'password', 'passphrase', 'contents', 'data', 'stringData',
  'csi.storage.k8s.io/serviceAccount.tokens', 'authorization', 'privateKey', 'key',
]);

/** camelCase names of values: accessToken, clientSecret, dbPassword (not secretName). */
const SENSITIVE_SUFFIX = /^[a-z][A-Za-z0-9]*(Token|Tokens|Secret|Secrets|Password|Passphrase|PrivateKey)$/;

/** Whether a log field named `key` holds a secret value. */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(key) || SENSITIVE_SUFFIX.test(key);
}

/** Deep copy of `value` with sensitive keys redacted; safe for objects with cycles. */
export function redact(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => redact(v, seen));
  else {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) copy[k] = isSensitiveKey(k) ? '[REDACTED]' : redact(v, seen);
    out = copy;
  }
  // Only the chain of parents counts as a cycle: a shared, non-cyclic object is copied again.
  seen.delete(value);
  return out;
}

/** The JSON text of a value a property getter (or a Proxy trap) threw on: a log call must not fail. */
export const UNREADABLE_JSON = '"[Unreadable]"';
const REDACTED_JSON = '"[REDACTED]"';
const CIRCULAR_JSON = '"[Circular]"';

/**
 * The JSON text of `redact(value)` with object keys in sorted order, or undefined where
 * JSON has no value (undefined, a function, a symbol: the field is left out). BigInts are
 * written as strings. A getter that throws is written as "[Unreadable]" instead of
 * failing the log call.
 */
export function redactedJson(value: unknown, parents?: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'number': return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'bigint': return `"${value.toString()}"`;
    case 'object': break;
    default: return undefined;
  }
  if (value === null) return 'null';
  // Made for the first object only: most fields of a log line are strings and numbers.
  parents ??= new Set();
  if (parents.has(value)) return CIRCULAR_JSON;
  parents.add(value);
  try {
    if (Buffer.isBuffer(value)) return `"[${value.length} bytes]"`;
    return Array.isArray(value) ? arrayJson(value, parents) : objectJson(value, parents);
  } catch {
    // A revoked Proxy, a throwing ownKeys trap: the value cannot be shown, the line still can.
    return UNREADABLE_JSON;
  } finally {
    parents.delete(value);
  }
}

function arrayJson(items: readonly unknown[], parents: Set<object>): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    let item: unknown;
    try {
      item = items[i];
    } catch {
      out += UNREADABLE_JSON;
      continue;
    }
    out += redactedJson(item, parents) ?? 'null';
  }
  return `${out}]`;
}

/** The JSON text of the field `key` of a redacted object: "[REDACTED]" for a sensitive key, whatever its value. */
export function redactedFieldJson(key: string, value: unknown, parents?: Set<object>): string | undefined {
  return isSensitiveKey(key) ? REDACTED_JSON : redactedJson(value, parents);
}

function objectJson(object: object, parents: Set<object>): string {
  const keys = Object.keys(object).sort();
  let out = '{';
  for (const key of keys) {
    let text: string | undefined;
    if (isSensitiveKey(key)) text = REDACTED_JSON;
    else {
      try {
        text = redactedJson((object as Record<string, unknown>)[key], parents);
      } catch {
        text = UNREADABLE_JSON;
      }
    }
    if (text === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${text}`;
  }
  return `${out}}`;
}
