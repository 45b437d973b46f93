// One Vault request group of a Mount (request-key.ts, groupByRequest) answered with
// its lease in mind: the data of the lease the driver has mounted when it is still good
// (lease-policy.ts), renewed when that is enough, else a fresh response from Vault. The
// Vault calls are the caller's (ports), bound to the identity's session and the Mount.
// The caller renders the data, and once the whole Mount has succeeded holds the lease
// (LeaseStore.hold with the versions it returned), so a failed Mount holds nothing.
import {
  issuedLease,
  leaseDecision,
  leaseOf,
  renewOutcome,
  renewRequest,
  renewResultOf,
  type MountedLease,
  type RenewResult,
} from './lease-policy.js';
import type { LeaseStore, MountedObject } from './lease-store.js';

/** The Vault calls a group needs, bound to one identity and Mount. */
export interface LeasedReadPorts {
  /**
   * Sends the group's request (a GET through the read cache, a PUT/POST directly): its
   * data, whole body and, when known, when the token that sent it expires (it wins over
   * the call's: a read may log in again halfway, so only the port knows which token issued).
   */
  fetch(): Promise<{
    readonly data: Readonly<Record<string, unknown>>;
    readonly body: unknown;
    readonly tokenExpiresAtMs?: number | undefined;
  }>;
  /** Sends `PUT <path>` with `body` using the identity's token; resolves with the answer's body. */
  renew(request: {
    readonly path: string;
    readonly body: { readonly lease_id: string; readonly increment: number };
  }): Promise<unknown>;
}

/** How the group was answered: from the held lease, after renewing it, or from Vault. */
export type LeasedReadOutcome = 'reused' | 'renewed' | 'fetched';

/** The group's data, and the lease to hold once the Mount succeeded (none for a response without a lease). */
export interface LeasedRead {
  readonly outcome: LeasedReadOutcome;
  /** The data to render every object of the group from. Secret: not enumerable. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly lease: { readonly leaseId: string; readonly lease: MountedLease } | undefined;
  /** Why a renewal did not keep the lease (the renewal's error, or its answer); for the log. */
  readonly renewFailure?: unknown;
}

/** Inputs of readWithLease besides the ports. */
export interface LeasedReadCall {
  readonly store: LeaseStore;
  readonly identityKey: string;
  /** The group's objects with the versions the driver has mounted (current_object_version). */
  readonly mounted: readonly MountedObject[];
  /** When the identity's token expires (Vault revokes its leases then); undefined: never, or the fetch tells. */
  readonly tokenExpiresAtMs?: number | undefined;
  readonly now: () => number;
}

/** The lease fields of a held lease, without its data. */
function mountedOf(held: MountedLease): MountedLease {
  return {
    expiresAtMs: held.expiresAtMs,
    ttlMs: held.ttlMs,
    renewable: held.renewable,
    tokenExpiresAtMs: held.tokenExpiresAtMs,
  };
}

/** A LeasedRead with `data` not enumerable, so logging the answer does not print the secret. */
function answer(fields: Omit<LeasedRead, 'data'>, data: Readonly<Record<string, unknown>>): LeasedRead {
  return Object.defineProperty({ ...fields }, 'data', { value: data, enumerable: false }) as LeasedRead;
}

/**
 * The data for one request group: the mounted lease's while it is valid for more than
 * a third of its TTL, the same after a successful renewal, else a fresh response (and
 * the former lease is forgotten). A renewal failure is not an error: it re-issues.
 */
export async function readWithLease(call: LeasedReadCall, ports: LeasedReadPorts): Promise<LeasedRead> {
  const { store, identityKey } = call;
  const held = store.find(identityKey, call.mounted);
  let renewFailure: unknown;
  if (held) {
    const decision = leaseDecision(held, call.now());
    if (decision === 'reuse')
      return answer({ outcome: 'reused', lease: { leaseId: held.leaseId, lease: mountedOf(held) } }, held.data);
    if (decision === 'renew') {
      const sentAtMs = call.now();
      let result: RenewResult;
      try {
        result = renewResultOf(await ports.renew(renewRequest(held.leaseId, held)));
        if (!result.ok) renewFailure = 'the renewal answered without a lease';
      } catch (err) {
        // Any failure (403 without sys/leases/renew in the policies, lease gone, Vault down) re-issues.
        result = { ok: false };
        renewFailure = err;
      }
      const outcome = renewOutcome(held, held.leaseId, result, sentAtMs);
      if (outcome.decision === 'renewed') {
        store.renewed(identityKey, held.leaseId, outcome.lease);
        return answer({ outcome: 'renewed', lease: { leaseId: held.leaseId, lease: outcome.lease } }, held.data);
      }
      if (result.ok) {
        renewFailure =
          result.leaseId === held.leaseId
            ? 'Vault granted no more than a third of the TTL (max TTL reached, or the token ends first)'
            : 'the renewal answered for another lease';
      }
    }
    store.release(identityKey, held.leaseId);
  }
  const sentAtMs = call.now();
  const response = await ports.fetch();
  const lease = leaseOf(response.body);
  return answer(
    {
      outcome: 'fetched',
      lease: lease
        ? {
            leaseId: lease.leaseId,
            lease: issuedLease(
              lease,
              sentAtMs,
              'tokenExpiresAtMs' in response ? response.tokenExpiresAtMs : call.tokenExpiresAtMs,
            ),
          }
        : undefined,
      ...(renewFailure === undefined ? {} : { renewFailure }),
    },
    response.data,
  );
}
