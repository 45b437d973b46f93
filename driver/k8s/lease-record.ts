/**
 * The decisions of leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package makes them, so our replicas and client-go's (SSC's, or any
 * controller-runtime manager's) honour one Lease the same way. Pure: the caller reads and
 * writes the Lease.
 */

/** The spec of a Lease (coordination.k8s.io/v1). Times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/**
 * What this replica last saw of the Lease, and when by its own monotonic clock: as in
 * client-go, expiry is judged from when the record was last seen to change, never from the
 * holder's renewTime, so clock skew between nodes does not matter.
 */
export interface LeaseObservation {
  readonly record: string;
  readonly atMs: number;
}

/** One try to acquire or renew. */
export type LeaseStep =
  | { readonly action: 'write'; readonly spec: LeaseSpec; readonly observation: LeaseObservation }
  | { readonly action: 'held'; readonly holder: string; readonly observation: LeaseObservation };

/** What a try needs besides the Lease read. */
export interface LeaseTry {
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** Monotonic milliseconds (performance.now), for expiry. */
  readonly monotonicMs: number;
  /** Wall-clock time written into acquireTime and renewTime. */
  readonly wallClock: Date;
}

/** Go's metav1.MicroTime in JSON: RFC 3339, UTC, six fractional digits. */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The fields the election compares, in a fixed order. */
function recordOf(spec: LeaseSpec): string {
  return JSON.stringify([
    spec.holderIdentity ?? '',
    spec.leaseDurationSeconds ?? 0,
    spec.acquireTime ?? '',
    spec.renewTime ?? '',
    spec.leaseTransitions ?? 0,
  ]);
}

/**
 * The next step given the Lease as read (undefined: it does not exist) and what was seen
 * before: take it (absent, released, expired, or ours: renew), or leave it to its holder.
 */
export function leaseStep(current: LeaseSpec | undefined, seen: LeaseObservation | undefined, t: LeaseTry): LeaseStep {
  const now = microTime(t.wallClock);
  const mine = (spec: LeaseSpec): LeaseStep => ({
    action: 'write',
    spec,
    observation: { record: recordOf(spec), atMs: t.monotonicMs },
  });
  if (current === undefined)
    return mine({
      holderIdentity: t.identity,
      leaseDurationSeconds: t.leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    });
  const record = recordOf(current);
  const observation = seen?.record === record ? seen : { record, atMs: t.monotonicMs };
  const holder = current.holderIdentity ?? '';
  const durationMs = (current.leaseDurationSeconds ?? 0) * 1000;
  if (holder !== '' && holder !== t.identity && observation.atMs + durationMs > t.monotonicMs)
    return { action: 'held', holder, observation };
  const renewing = holder === t.identity;
  return mine({
    holderIdentity: t.identity,
    leaseDurationSeconds: t.leaseDurationSeconds,
    acquireTime: renewing ? (current.acquireTime ?? now) : now,
    renewTime: now,
    leaseTransitions: renewing ? (current.leaseTransitions ?? 0) : (current.leaseTransitions ?? 0) + 1,
  });
}

/**
 * The Lease given up on shutdown, as client-go's ReleaseOnCancel writes it: no holder, one
 * second left, so another replica takes over at its next try instead of after the lease
 * duration.
 */
export function releasedLease(current: LeaseSpec, wallClock: Date): LeaseSpec {
  const now = microTime(wallClock);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}

/** Why these timings cannot work (client-go's rules), or undefined. */
export function leaseTimingProblem(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number) {
  if (leaseDurationMs <= renewDeadlineMs)
    return '--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline';
  if (renewDeadlineMs <= RETRY_JITTER * retryPeriodMs)
    return `--leader-elect-renew-deadline must be greater than ${RETRY_JITTER} × --leader-elect-retry-period`;
  if (leaseDurationMs % 1000 !== 0) return '--leader-elect-lease-duration must be whole seconds';
  return undefined;
}

/** client-go's JitterFactor: an acquire try waits the retry period plus up to this share more. */
export const RETRY_JITTER = 1.2;
