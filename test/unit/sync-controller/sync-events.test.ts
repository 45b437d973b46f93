import { expect } from 'chai';
import { eventFor } from '../../../sync-controller/sync-events.js';
import type { ReconcileResult } from '../../../sync-controller/reconcile.js';

describe('sync-controller events', () => {
  const failed = { kind: 'failed', reason: 'ProviderError', message: 'm' } as const;
  const table: [string, ReconcileResult, string | undefined][] = [
    [
      'created',
      { outcome: { kind: 'synced', hash: 'h', created: true }, statusChanged: true },
      'Normal SecretSynced Secret created',
    ],
    [
      'updated',
      { outcome: { kind: 'synced', hash: 'h', created: false }, statusChanged: true },
      'Normal SecretSynced Secret updated',
    ],
    ['unchanged', { outcome: { kind: 'unchanged' }, statusChanged: false }, undefined],
    ['a new failure', { outcome: failed, statusChanged: true }, 'Warning SecretSyncFailed ProviderError: m'],
    ['the same failure again (no event per poll)', { outcome: failed, statusChanged: false }, undefined],
    [
      'not owned',
      { outcome: { ...failed, reason: 'ControllerPatchError', notOwned: true }, statusChanged: true },
      'Warning SecretNotOwned ControllerPatchError: m',
    ],
  ];
  for (const [what, result, expected] of table)
    it(what, () => {
      const e = eventFor(result);
      expect(e && `${e.type} ${e.reason} ${e.message}`).to.equal(expected);
    });
});
