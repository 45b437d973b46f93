import type { Condition } from './secret-sync.js';

/** Condition types (upstream's). */
export const CONDITION_CREATED = 'SecretCreated';
export const CONDITION_UPDATED = 'SecretUpdated';

/** Condition reasons, as upstream's secrets-store-sync-controller names them. */
export const Reasons = Object.freeze({
  syncStarting: 'SyncStarting',
  noUpdatesAttemptedYet: 'NoUpdatesAttemptedYet',
  createSuccessful: 'CreateSuccessful',
  secretUpToDate: 'SecretUpToDate',
  spcMisconfigured: 'SecretProviderClassMisconfigured',
  providerError: 'ProviderError',
  remoteFetchFailed: 'RemoteSecretStoreFetchFailed',
  patchError: 'ControllerPatchError',
  syncError: 'ControllerSyncError',
  invalidLabel: 'InvalidClusterSecretLabelError',
  invalidAnnotation: 'InvalidClusterSecretAnnotationError',
});

/** Upstream's messages on success. */
export const MESSAGE_CREATE_SUCCESSFUL = 'Secret created successfully.';
export const MESSAGE_UPDATE_SUCCESSFUL = 'Secret contains last observed values.';

/** Reasons after which a sync is retried even when the hash did not change (upstream's list). */
const FAILED_REASONS: ReadonlySet<string> = new Set([
  Reasons.spcMisconfigured,
  Reasons.invalidAnnotation,
  Reasons.invalidLabel,
  Reasons.providerError,
  Reasons.remoteFetchFailed,
  Reasons.patchError,
  Reasons.syncError,
]);

/** True when a condition records a failure that a later sync must retry. */
export function hasFailedCondition(conditions: readonly Condition[] | undefined): boolean {
  return (conditions ?? []).some((c) => FAILED_REASONS.has(c.reason));
}

/** The condition to set: everything but the transition time, which setCondition decides. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/**
 * Sets a condition as apimachinery's meta.SetStatusCondition does: one per type, the
 * transition time changes only when the status does. Returns a new list.
 */
export function setCondition(conditions: readonly Condition[], update: ConditionUpdate, now: Date): Condition[] {
  const existing = conditions.find((c) => c.type === update.type);
  const lastTransitionTime =
    existing && existing.status === update.status ? existing.lastTransitionTime : now.toISOString();
  const next: Condition = { ...update, lastTransitionTime };
  return existing ? conditions.map((c) => (c.type === update.type ? next : c)) : [...conditions, next];
}

/** Both conditions at their starting values (upstream's initConditions), where missing. */
export function initialConditions(conditions: readonly Condition[] | undefined, now: Date): Condition[] {
  let out = [...(conditions ?? [])];
  if (!out.some((c) => c.type === CONDITION_CREATED))
    out = setCondition(
      out,
      { type: CONDITION_CREATED, status: 'Unknown', reason: Reasons.syncStarting, message: '' },
      now,
    );
  if (!out.some((c) => c.type === CONDITION_UPDATED))
    out = setCondition(
      out,
      { type: CONDITION_UPDATED, status: 'Unknown', reason: Reasons.noUpdatesAttemptedYet, message: '' },
      now,
    );
  return out;
}
