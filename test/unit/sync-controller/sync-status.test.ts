import { expect } from 'chai';
import { sameStatus, statusAfter, type SyncOutcome } from '../../../sync-controller/sync-status.js';
import type { SecretSync, SecretSyncStatus } from '../../../sync-controller/secret-sync.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T01:00:00Z');

function sync(status?: SecretSyncStatus): SecretSync {
  return {
    metadata: { name: 's', namespace: 'n', uid: 'u' },
    spec: { secretProviderClassName: 'c', serviceAccountName: 'sa', secretObject: { data: [] } },
    ...(status ? { status } : {}),
  };
}
const brief = (s: SecretSyncStatus) => (s.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('sync-controller statusAfter', () => {
  const created = statusAfter(sync(), { kind: 'synced', hash: 'h1', created: true }, T0);
  const table: [string, SecretSyncStatus | undefined, SyncOutcome, string[]][] = [
    [
      'first sync',
      undefined,
      { kind: 'synced', hash: 'h1', created: true },
      ['SecretCreated=True/CreateSuccessful', 'SecretUpdated=True/SecretUpToDate'],
    ],
    [
      'first sync fails',
      undefined,
      { kind: 'failed', reason: 'ProviderError', message: 'm' },
      ['SecretCreated=False/ProviderError', 'SecretUpdated=Unknown/NoUpdatesAttemptedYet'],
    ],
    [
      'later sync fails',
      created,
      { kind: 'failed', reason: 'ControllerPatchError', message: 'm' },
      ['SecretCreated=True/CreateSuccessful', 'SecretUpdated=False/ControllerPatchError'],
    ],
    [
      'later sync',
      created,
      { kind: 'synced', hash: 'h2', created: false },
      ['SecretCreated=True/CreateSuccessful', 'SecretUpdated=True/SecretUpToDate'],
    ],
  ];
  for (const [what, before, outcome, expected] of table)
    it(what, () => expect(brief(statusAfter(sync(before), outcome, T1))).to.deep.equal(expected));

  it('sets syncHash and lastSuccessfulSyncTime on success only', () => {
    expect(created).to.include({ syncHash: 'h1', lastSuccessfulSyncTime: T0.toISOString() });
    const failed = statusAfter(sync(created), { kind: 'failed', reason: 'ProviderError', message: 'm' }, T1);
    expect(failed).to.include({ syncHash: 'h1', lastSuccessfulSyncTime: T0.toISOString() });
  });

  it('keeps a transition time while the status stays, and a repeated failure is the same status', () => {
    const failure: SyncOutcome = { kind: 'failed', reason: 'ProviderError', message: 'm' };
    const once = statusAfter(sync(created), failure, T1);
    const twice = statusAfter(sync(once), failure, new Date('2026-01-01T02:00:00Z'));
    expect(sameStatus(once, twice)).to.equal(true);
    const kept = twice.conditions?.find((c) => c.type === 'SecretCreated');
    expect(kept?.lastTransitionTime).to.equal(T0.toISOString());
  });

  it('compares statuses whatever the order of their keys (as the API returns them)', () => {
    const reordered = JSON.parse(JSON.stringify(created, Object.keys(created).sort().reverse())) as SecretSyncStatus;
    expect(sameStatus({ ...reordered, conditions: created.conditions }, created)).to.equal(true);
  });
});
