// The grpc-timeout request header (grpc/doc/PROTOCOL-HTTP2.md): TimeoutValue TimeoutUnit,
// a positive integer of at most 8 ASCII digits followed by H, M, S, m, u or n. The client
// sends the time left until its deadline; the server turns it back into a deadline.

/** The largest TimeoutValue: the spec allows at most 8 digits. */
const MAX_TIMEOUT_VALUE = 99_999_999;

/** Milliseconds per TimeoutUnit. */
const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({ H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 });

/** Units tried, finest first, when formatting: the first whose value fits in 8 digits. */
const FORMAT_UNITS: readonly (readonly [string, number])[] = [['m', 1], ['S', 1_000], ['M', 60_000], ['H', 3_600_000]];

/**
 * The timeout a grpc-timeout header value carries, in milliseconds (fractional for u and
 * n), or undefined when the value is malformed (grpc-go then answers INTERNAL
 * "malformed grpc-timeout"). "0n" is valid: a deadline that has already passed.
 */
export function parseGrpcTimeout(value: string): number | undefined {
  const m = /^([0-9]{1,8})([HMSmun])$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

/**
 * A grpc-timeout header value for `ms` milliseconds left, rounded up so the server's
 * deadline is never earlier than the client's; at most 8 digits, clamped to the largest
 * expressible hours. `ms` ≤ 0 gives "0m" (callers fail such calls before sending).
 */
export function formatGrpcTimeout(ms: number): string {
  if (!(ms > 0)) return '0m';
  for (const [unit, size] of FORMAT_UNITS) {
    const value = Math.ceil(ms / size);
    if (value <= MAX_TIMEOUT_VALUE) return `${value}${unit}`;
  }
  return `${MAX_TIMEOUT_VALUE}H`;
}
