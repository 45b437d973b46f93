import {
  CONDITION_CREATED,
  CONDITION_UPDATED,
  MESSAGE_CREATE_SUCCESSFUL,
  MESSAGE_UPDATE_SUCCESSFUL,
  Reasons,
  initialConditions,
  setCondition,
} from './conditions.js';
import type { SecretSync, SecretSyncStatus } from './secret-sync.js';

/** What one reconcile ended with. */
export type SyncOutcome =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'synced'; readonly hash: string; readonly created: boolean }
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly message: string;
      /** The Secret exists and is not this SecretSync's: nothing was written. */
      readonly notOwned?: boolean;
    };

/**
 * The status after an outcome, as upstream writes it: the condition for this attempt is
 * SecretCreated until a first sync succeeded (status.syncHash set), SecretUpdated after;
 * a success sets syncHash and lastSuccessfulSyncTime. Unlike upstream, a success after a
 * failure always turns the failed condition back to True.
 */
export function statusAfter(ss: SecretSync, outcome: SyncOutcome, now: Date): SecretSyncStatus {
  const previous = ss.status ?? {};
  const attempt = previous.syncHash ? CONDITION_UPDATED : CONDITION_CREATED;
  let conditions = initialConditions(previous.conditions, now);
  if (outcome.kind === 'unchanged') return { ...previous, conditions };
  if (outcome.kind === 'failed') {
    conditions = setCondition(
      conditions,
      { type: attempt, status: 'False', reason: outcome.reason, message: outcome.message },
      now,
    );
    return { ...previous, conditions };
  }
  if (attempt === CONDITION_CREATED)
    conditions = setCondition(
      conditions,
      { type: CONDITION_CREATED, status: 'True', reason: Reasons.createSuccessful, message: MESSAGE_CREATE_SUCCESSFUL },
      now,
    );
  conditions = setCondition(
    conditions,
    { type: CONDITION_UPDATED, status: 'True', reason: Reasons.secretUpToDate, message: MESSAGE_UPDATE_SUCCESSFUL },
    now,
  );
  return { syncHash: outcome.hash, lastSuccessfulSyncTime: now.toISOString(), conditions };
}

/** JSON with object keys sorted: the API server returns keys in its own order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** True when writing `next` would change nothing (a failure repeated by every poll). */
export function sameStatus(previous: SecretSyncStatus | undefined, next: SecretSyncStatus): boolean {
  return canonical(previous ?? {}) === canonical(next);
}
