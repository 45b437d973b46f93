// When a dynamic secret (database credentials, a PKI certificate with a lease, …) is
// issued again. Every rotation poll sends a Mount; issuing anew at each one would mint a
// credential per pod per poll. The rules:
// - a lease is recognised only by a non-empty `lease_id`, never by `lease_duration`:
//   KV v1 answers with a 32-day lease_duration and no lease;
// - the mounted lease is reused while it is valid for more than a third of its TTL;
// - within the last third a renewable lease is renewed (`PUT sys/leases/renew`), and
//   issued anew when it is not renewable, the renewal fails, or the renewed lease would
//   still end within a third of the TTL (Vault capped it at the max TTL);
// - a lease the provider does not know (it restarted; the store evicted it; the driver
//   has another version mounted) is issued anew.
// Vault revokes a lease when the token that issued it expires or is revoked, so a lease
// ends no later than its issuing token: renewing cannot help past that point.
// Pure functions; the caller passes the time (epoch milliseconds).

/** A lease as Vault returned it with a secret. */
export interface VaultLease {
  readonly leaseId: string;
  /** `lease_duration` in milliseconds. */
  readonly durationMs: number;
  readonly renewable: boolean;
}

/** What the provider knows of a lease it issued: enough to decide at the next Mount. */
export interface MountedLease {
  /** When Vault ends the lease: issue (or last renewal) time plus lease_duration, epoch ms. */
  readonly expiresAtMs: number;
  /** The lease's TTL when it was issued: the measure of the one-third rule. */
  readonly ttlMs: number;
  readonly renewable: boolean;
  /** When the token that issued the lease expires (Vault revokes the lease with it); undefined: never. */
  readonly tokenExpiresAtMs?: number | undefined;
}

/** What to do with an object's lease at a Mount. */
export type LeaseDecision = 'reuse' | 'renew' | 'reissue';

/** The answer of `PUT sys/leases/renew`, or its failure (any error: the lease may be gone). */
export type RenewResult =
  | { readonly ok: true; readonly leaseId: string; readonly durationMs: number; readonly renewable: boolean }
  | { readonly ok: false };

/** After a renewal: the lease as renewed, or issue anew. */
export type RenewOutcome =
  { readonly decision: 'renewed'; readonly lease: MountedLease } | { readonly decision: 'reissue' };

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function seconds(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value * 1000 : 0;
}

/**
 * The lease of a Vault response body, or undefined when it has none. Only a non-empty
 * string `lease_id` makes a lease (KV v1 reports `lease_duration` without one).
 */
export function leaseOf(body: unknown): VaultLease | undefined {
  const fields = record(body);
  const leaseId = fields?.['lease_id'];
  if (typeof leaseId !== 'string' || leaseId === '') return undefined;
  return { leaseId, durationMs: seconds(fields?.['lease_duration']), renewable: fields?.['renewable'] === true };
}

/** The lease as held right after it was issued at `issuedAtMs` by a token expiring at `tokenExpiresAtMs`. */
export function issuedLease(lease: VaultLease, issuedAtMs: number, tokenExpiresAtMs: number | undefined): MountedLease {
  return {
    expiresAtMs: issuedAtMs + lease.durationMs,
    ttlMs: lease.durationMs,
    renewable: lease.renewable,
    tokenExpiresAtMs,
  };
}

/** When the lease really ends: its own expiry, or its issuing token's if that comes first. */
export function leaseEnd(lease: MountedLease): number {
  return Math.min(lease.expiresAtMs, lease.tokenExpiresAtMs ?? Infinity);
}

/**
 * Reuse the mounted lease while it is valid for more than a third of its TTL; in the
 * last third renew it if it is renewable and its token outlives that third, else (and
 * when it has ended or the provider does not know it) issue anew.
 */
export function leaseDecision(mounted: MountedLease | undefined, nowMs: number): LeaseDecision {
  if (!mounted || !(mounted.ttlMs > 0)) return 'reissue';
  const third = mounted.ttlMs / 3;
  const left = leaseEnd(mounted) - nowMs;
  if (left > third) return 'reuse';
  if (left <= 0 || !mounted.renewable) return 'reissue';
  // The lease ends with its token: a renewal could not carry it past the last third.
  if ((mounted.tokenExpiresAtMs ?? Infinity) - nowMs <= third) return 'reissue';
  return 'renew';
}

/**
 * After a renewal sent at `sentAtMs` (the safe side: Vault counts the new duration
 * from when it handled the call): the renewed lease, or issue anew when the renewal
 * failed, answered for another lease, or leaves the lease ending within a third of its
 * TTL (Vault capped it at the max TTL, or the issuing token ends first).
 */
export function renewOutcome(
  mounted: MountedLease,
  leaseId: string,
  result: RenewResult,
  sentAtMs: number,
): RenewOutcome {
  if (!result.ok || result.leaseId !== leaseId || !(result.durationMs > 0)) return { decision: 'reissue' };
  const lease: MountedLease = { ...mounted, expiresAtMs: sentAtMs + result.durationMs, renewable: result.renewable };
  if (leaseEnd(lease) - sentAtMs <= mounted.ttlMs / 3) return { decision: 'reissue' };
  return { decision: 'renewed', lease };
}

/**
 * The body of `PUT sys/leases/renew` for `leaseId`: ask for the original TTL again
 * (Vault caps the increment at the lease's max TTL and answers with what it granted).
 */
export function renewRequest(
  leaseId: string,
  mounted: MountedLease,
): { readonly path: string; readonly body: { readonly lease_id: string; readonly increment: number } } {
  return {
    path: 'sys/leases/renew',
    body: { lease_id: leaseId, increment: Math.max(1, Math.ceil(mounted.ttlMs / 1000)) },
  };
}

/** The answer of `PUT sys/leases/renew` read as a RenewResult; a body without a lease is a failure. */
export function renewResultOf(body: unknown): RenewResult {
  const lease = leaseOf(body);
  return lease
    ? { ok: true, leaseId: lease.leaseId, durationMs: lease.durationMs, renewable: lease.renewable }
    : { ok: false };
}
