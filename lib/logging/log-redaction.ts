// What a log line may show of a value: secret values replaced by "[REDACTED]" under the
// keys that hold them, Buffers as a byte count, cycles cut, values that cannot be read as
// "[Unreadable]". The logger's winston format (log-format.ts) applies `redact` to every
// field of an entry before winston's JSON format writes it.

/**
 * Keys whose values are replaced by "[REDACTED]" wherever they appear in a log entry:
 * they hold secret values (a CSI request's `secrets`, tokens, a Secret's `data`, file
 * contents, keys). Names are not values: `secret` ("ns/name" of a synced Secret),
 * `secretName` and `secretProviderClass` are logged as they are (docs/configuration.md#logs).
 */
const SENSITIVE_KEYS = new Set([
  'secrets',
  'token',
  'tokens',
  'password',
  'passphrase',
  'contents',
  'data',
  'stringData',
  'csi.storage.k8s.io/serviceAccount.tokens',
  'authorization',
  'privateKey',
  'key',
]);

/** camelCase names of values: accessToken, clientSecret, dbPassword (not secretName). */
const SENSITIVE_SUFFIX = /^[a-z][A-Za-z0-9]*(Token|Tokens|Secret|Secrets|Password|Passphrase|PrivateKey)$/;

/** Whether a log field named `key` holds a secret value. */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEYS.has(key) || SENSITIVE_SUFFIX.test(key);
}

/** What a log line shows for a value under a sensitive key. */
export const REDACTED = '[REDACTED]';
/** What a log line shows for a value a getter (or a Proxy trap) threw on: a log call must not fail. */
export const UNREADABLE = '[Unreadable]';
const CIRCULAR = '[Circular]';

/**
 * Deep copy of `value` as a log line may show it: values under sensitive keys replaced
 * (and never read), Buffers as "[N bytes]", an object inside itself as "[Circular]", a
 * value whose reading throws as "[Unreadable]". Objects become plain objects of their own
 * enumerable fields (without prototype, so an own `__proto__` key stays a field);
 * functions and symbols, which JSON has no text for, become undefined. Never throws.
 */
export function redact(value: unknown, parents?: Set<object>): unknown {
  switch (typeof value) {
    case 'object':
      break;
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return value;
  }
  if (value === null) return null;
  // Made for the first object only: most fields of a log line are strings and numbers.
  parents ??= new Set();
  // Only the chain of parents counts as a cycle: a shared, non-cyclic object is copied again.
  if (parents.has(value)) return CIRCULAR;
  parents.add(value);
  try {
    if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
    return Array.isArray(value) ? redactArray(value, parents) : redactObject(value, parents);
  } catch {
    // A revoked Proxy, a throwing ownKeys trap: the value cannot be shown, the line still can.
    return UNREADABLE;
  } finally {
    parents.delete(value);
  }
}

function redactArray(items: readonly unknown[], parents: Set<object>): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) out.push(redact(readOwn(items, i), parents));
  return out;
}

function redactObject(object: object, parents: Set<object>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    out[key] = isSensitiveKey(key) ? REDACTED : redact(readOwn(object, key), parents);
  }
  return out;
}

/** `object[key]`, or UNREADABLE when its getter throws. */
function readOwn(object: object, key: string | number): unknown {
  try {
    return (object as Record<string | number, unknown>)[key];
  } catch {
    return UNREADABLE;
  }
}
