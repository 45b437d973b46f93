// HTTP's Retry-After (RFC 9110 §10.2.3), as vaults send it with a 429: delay-seconds or an
// HTTP date. Providers pass the wait on to the driver as gRPC's pushback
// (SscError.retryAfterMs → `grpc-retry-pushback-ms`), which rotation's backoff honours.

/** The wait a Retry-After value asks for, in ms from `nowMs`; undefined when absent or unusable. */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^[0-9]{1,7}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined; // a number out of range, or a negative one: not a date either
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}
