import { recordEvent } from '../driver/k8s/event-recorder.js';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import type { Logger } from '../lib/logging/logger.js';
import type { ReconcileResult } from './reconcile.js';
import { FIELD_MANAGER, SECRET_SYNC_API_VERSION, SECRET_SYNC_KIND, type SecretSync } from './secret-sync.js';

/** Event reasons on SecretSyncs (docs/secret-sync-controller.md). */
export type SyncEventReason = 'SecretSynced' | 'SecretSyncFailed' | 'SecretNotOwned';

/** The event a reconcile's result calls for: every write, and a failure when it changes the status. */
export function eventFor(
  result: ReconcileResult,
): { type: 'Normal' | 'Warning'; reason: SyncEventReason; message: string } | undefined {
  const { outcome } = result;
  if (outcome.kind === 'synced')
    return { type: 'Normal', reason: 'SecretSynced', message: outcome.created ? 'Secret created' : 'Secret updated' };
  if (outcome.kind !== 'failed' || !result.statusChanged) return undefined;
  const reason = outcome.notOwned ? 'SecretNotOwned' : 'SecretSyncFailed';
  return { type: 'Warning', reason, message: `${outcome.reason}: ${outcome.message}` };
}

/** Records an event on a SecretSync; never throws. */
export type SyncEventSink = (
  ss: SecretSync,
  type: 'Normal' | 'Warning',
  reason: SyncEventReason,
  message: string,
) => Promise<void>;

/** Events on SecretSyncs through the API, reported as `secrets-store-sync-controller` from the controller's pod. */
export function apiSyncEvents(api: Pick<KubeApi, 'create'>, podName: string, logger: Logger): SyncEventSink {
  return (ss, type, reason, message) =>
    recordEvent(
      api,
      { component: FIELD_MANAGER, host: podName || 'unknown' },
      {
        involved: {
          apiVersion: SECRET_SYNC_API_VERSION,
          kind: SECRET_SYNC_KIND,
          name: ss.metadata?.name ?? '',
          namespace: ss.metadata?.namespace ?? '',
          uid: ss.metadata?.uid ?? '',
        },
        type,
        reason,
        message,
        time: new Date(),
      },
      logger,
    );
}
