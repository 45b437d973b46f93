// JSON whose bytes depend only on the value: object keys sorted, at every depth, so a
// secret read again gives the same file and the same version (HashiCorp's provider
// writes the whole response, whose request_id changes on every read: its issue #474).
// Written as Go's encoding/json writes a map, which HashiCorp's provider uses for a
// non-string value under `secretKey`: keys sorted by their UTF-8 bytes, no spaces, and
// `<`, `>`, `&`, U+2028 and U+2029 escaped as \u003c, \u003e, \u0026, \u2028, \u2029.
// Numbers are JavaScript's shortest form (Go keeps Vault's original digits).

const GO_ESCAPES: Readonly<Record<string, string>> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** Compares two keys by their UTF-8 bytes, as Go sorts map keys. */
function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function encode(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(encode).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort(byUtf8)
      .map((k) => `${JSON.stringify(k)}:${encode((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value) ?? 'null';
}

/**
 * `value` (a JSON value, as parsed from Vault's response) as stable, compact JSON:
 * equal values always give equal strings, whatever order their keys came in.
 */
export function stableJson(value: unknown): string {
  // The escaped characters only ever appear inside strings in JSON text.
  return encode(value).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);
}
