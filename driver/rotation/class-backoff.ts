// Rotation's backoff per class and identity (pure: clock and randomness passed in). The
// volumes of one SecretProviderClass read by one service account ask their provider for the
// same objects with the same credentials: when the provider throttles (RESOURCE_EXHAUSTED,
// a vault's 429) or keeps failing for one of them, calling again for each of the others
// only deepens the outage (upstream #1483: a vault throttled for five hours). So after a
// failure the whole group waits, exponentially longer with each failure in a row (with
// jitter, capped at the rotation interval), or as long as the provider's pushback said;
// then one volume goes first, and the others follow only once it succeeded.

/** Which volumes share a backoff: one class (namespace/name) read by one service account. */
export interface BackoffGroup {
  readonly namespace: string;
  readonly spcName: string;
  readonly serviceAccountName: string;
}

/** The map key of a group. */
export function backoffKey(group: BackoffGroup): string {
  return `${group.namespace}/${group.spcName}\u0000${group.serviceAccountName}`;
}

/** How a refresh of a group's volume ended, as the backoff needs it. */
export type BackoffOutcome = { readonly ok: true } | { readonly ok: false; readonly retryAfterMs?: number | undefined };

/** What admit() decides for a volume: call its provider now, or wait until `until`. */
export type Admission = { readonly call: true } | { readonly call: false; readonly until: number };

/** A group's state: failures in a row, when it may call again, and whether its one trial call is out. */
interface GroupState {
  failures: number;
  until: number;
  trialOut: boolean;
}

/** The first wait after a failure; doubled with each failure in a row. */
export const FIRST_BACKOFF_MS = 1000;

/**
 * The wait after `failures` failures in a row (≥1): FIRST_BACKOFF_MS·2^(failures−1), capped
 * at `intervalMs`, of which the last half is jitter (`random` in [0, 1)), so the groups
 * throttled together do not all come back in the same millisecond.
 */
export function backoffDelay(failures: number, intervalMs: number, random: number): number {
  const full = Math.min(intervalMs, FIRST_BACKOFF_MS * 2 ** Math.min(failures - 1, 30));
  return Math.round(full / 2 + (full / 2) * random);
}

/** The backoff of every group on this node. */
export class ClassBackoff {
  private readonly groups = new Map<string, GroupState>();

  constructor(private readonly random: () => number = Math.random) {}

  /**
   * Whether a volume of `key` may call its provider at `now`. A group without failures
   * always may; a backing-off group may once its wait is over, one volume at a time (the
   * trial), until a success clears it.
   */
  admit(key: string, now: number): Admission {
    const state = this.groups.get(key);
    if (!state) return { call: true };
    if (now < state.until || state.trialOut) return { call: false, until: Math.max(state.until, now) };
    state.trialOut = true;
    return { call: true };
  }

  /**
   * Records how an admitted call ended: a success clears the group; a failure makes it
   * wait (the pushback when the provider sent one, else the exponential delay). Returns
   * the wait set, or undefined after a success.
   */
  settle(key: string, outcome: BackoffOutcome, intervalMs: number, now: number): number | undefined {
    if (outcome.ok) {
      this.groups.delete(key);
      return undefined;
    }
    const state = this.groups.get(key) ?? { failures: 0, until: now, trialOut: false };
    state.failures++;
    state.trialOut = false;
    const wait = outcome.retryAfterMs ?? backoffDelay(state.failures, intervalMs, this.random());
    state.until = Math.max(state.until, now + wait);
    this.groups.set(key, state);
    return state.until - now;
  }

  /** Releases a trial that ended without an answer (skipped, cancelled), so another volume may try. */
  release(key: string): void {
    const state = this.groups.get(key);
    if (state) state.trialOut = false;
  }

  /** When `key` may call again; undefined when it is not backing off. */
  until(key: string): number | undefined {
    return this.groups.get(key)?.until;
  }

  /** Forgets the groups not in `keys` (no volume of theirs is mounted any more). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.groups.keys()) if (!keys.has(key)) this.groups.delete(key);
  }

  /** Groups backing off. */
  get size(): number {
    return this.groups.size;
  }
}
