import { expect } from 'chai';
import type { PodRef } from '../../../../driver/publish/publish-request.js';
import type { SecretSyncOutcome } from '../../../../driver/secret-sync/secret-sync.js';
import { VolumeSecretSync, type SyncedVolume } from '../../../../driver/secret-sync/volume-secret-sync.js';
import type { SecretObject, SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { SYNC_RETRY_MAX_MS, syncRetryDelayMs } from '../../../../driver/secret-sync/sync-backoff.js';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

describe('syncRetryDelayMs: 1s doubling to 5m, less up to 20% jitter', () => {
  const table: [number, number, number][] = [
    [0, 0, 1000],
    [1, 0, 2000],
    [2, 0, 4000],
    [8, 0, 256_000],
    [9, 0, 300_000],
    [50, 0, 300_000],
    [0, 0.5, 900],
    [0, 0.999999, 800],
    [9, 0.5, 270_000],
    [-1, 0, 1000],
  ];
  for (const [retry, random, want] of table) {
    it(`retry ${retry}, random ${random} → ${want} ms`, () => expect(syncRetryDelayMs(retry, random)).to.equal(want));
  }
  it('never exceeds the 5m bound', () => {
    for (let n = 0; n < 40; n++) expect(syncRetryDelayMs(n, 0)).to.be.at.most(SYNC_RETRY_MAX_MS);
  });
});

/** A sleep the test releases by hand; an aborted one rejects, as realSleep does. */
class ManualSleep {
  readonly pending: { ms: number; release: () => void }[] = [];
  readonly requested: number[] = [];
  readonly sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      this.requested.push(ms);
      const entry = { ms, release: resolve };
      this.pending.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          this.pending.splice(this.pending.indexOf(entry), 1);
          reject(new Error('aborted'));
        },
        { once: true },
      );
    });
  /** Releases the oldest pending sleep and lets the attempt it starts run to its end. */
  async release(): Promise<void> {
    const next = this.pending.shift();
    if (!next) throw new Error('no retry is waiting');
    next.release();
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

const pod: PodRef = { name: 'web-1', namespace: 'ns', uid: 'pod-uid', serviceAccountName: 'default' };
const object = (objectName: string, secretName = 'app'): SecretObject => ({
  secretName,
  type: 'Opaque',
  labels: {},
  annotations: {},
  data: [{ objectName, key: 'k' }],
});
const spc = (objects: SecretObject[]): SecretProviderClass => ({
  namespace: 'ns',
  name: 'cls',
  provider: 'file',
  parameters: {},
  secretObjects: objects,
  annotations: {},
});

describe('VolumeSecretSync: a sync failure never fails the mount; it is reported, recorded and retried', () => {
  let events: string[];
  let statusWrites: string[];
  let outcome: (o: SecretObject) => SecretSyncOutcome;
  let currentClass: SecretProviderClass;
  let sleeper: ManualSleep;
  let sync: VolumeSecretSync;
  let targets: TargetLifecycle;
  let mounted: Set<string>;

  const volume = (recordedError?: string, s = spc([object('db-pasword')])): SyncedVolume => ({
    pod,
    targetPath: '/t/web-1',
    spc: s,
    owners: [],
    recordedError,
  });

  beforeEach(() => {
    events = [];
    statusWrites = [];
    currentClass = spc([object('db-pasword')]);
    outcome = (o) => {
      throw new SscError(
        'failed-precondition',
        `secretObjects app: objectName "${o.data[0]?.objectName}" is not a file in the mounted volume`,
        { reason: 'InvalidSecretObject' },
      );
    };
    sleeper = new ManualSleep();
    mounted = new Set(['/t/web-1', '/t/other', '/t/b']);
    targets = new TargetLifecycle();
    sync = new VolumeSecretSync({
      targets,
      secrets: { sync: async (_p, _t, o) => outcome(o) },
      events: {
        event: async (_p, type, reason, message) => {
          events.push(`${type} ${reason}: ${message}`);
        },
      },
      recordError: async (_p, _spc, message) => {
        statusWrites.push(message);
      },
      classes: { get: async () => currentClass },
      isMounted: async (t) => mounted.has(t),
      synced: () => undefined,
      logger: createLogger({ component: 'test', silent: true }),
      sleep: sleeper.sleep,
      random: () => 0,
    });
  });
  afterEach(async () => {
    await sync.stop();
  });

  it('reports once, records the error, retries 1s, 2s, 4s … quietly, and clears the error when a fixed class makes it succeed', async () => {
    expect(await sync.sync(volume(''), 'publish')).to.equal(false);
    const message =
      'failed to sync Secret ns/app: secretObjects app: objectName "db-pasword" is not a file in the mounted volume';
    expect(events).to.deep.equal([`Warning FailedToCreateSecret: ${message}`]);
    expect(statusWrites).to.deep.equal([message]);
    expect(sync.isRetrying('/t/web-1')).to.equal(true);
    await sleeper.release();
    await sleeper.release();
    expect(sleeper.requested).to.deep.equal([1000, 2000, 4000]);
    expect(events, 'the same failure again is not reported again').to.have.length(1);
    expect(statusWrites).to.have.length(1);
    // The user fixes objectName in the class: the next retry reads the class and succeeds, with no kubelet call.
    currentClass = spc([object('db-password')]);
    outcome = () => 'created';
    await sleeper.release();
    expect(statusWrites).to.deep.equal([message, '']);
    expect(sync.isRetrying('/t/web-1')).to.equal(false);
    expect(sleeper.pending).to.deep.equal([]);
  });

  it('reports a changed failure during retries, and every failure of a publish', async () => {
    await sync.sync(volume(''), 'publish');
    outcome = () => {
      throw new SscError('permission-denied', 'Kubernetes API refused to get Secret ns/app: HTTP 403', {
        reason: 'KubernetesAPIError',
      });
    };
    await sleeper.release();
    expect(events.map((e) => e.replace(/:.*/, ''))).to.deep.equal([
      'Warning FailedToCreateSecret',
      'Warning FailedToCreateSecret',
    ]);
    expect(events[1]).to.match(/HTTP 403/);
    expect(statusWrites).to.have.length(2);
    await sync.sync(volume(), 'publish');
    expect(events, 'a publish reports even an unchanged failure').to.have.length(3);
    expect(sleeper.pending, 'still one retry loop').to.have.length(1);
  });

  it('NodeUnpublishVolume (the target forgotten) cancels the retry; stop() cancels them all', async () => {
    await sync.sync(volume(''), 'publish');
    await sync.sync({ ...volume(''), targetPath: '/t/other' }, 'publish');
    expect(sleeper.pending).to.have.length(2);
    targets.forget('/t/web-1');
    await settle();
    expect(sleeper.pending).to.have.length(1);
    expect(sync.isRetrying('/t/web-1')).to.equal(false);
    await sync.stop();
    expect(sleeper.pending).to.deep.equal([]);
    expect(await sync.sync(volume(''), 'publish'), 'after stop nothing syncs').to.equal(false);
  });

  it('a success after a publish rewrote the status writes nothing; one after a restart clears what the status object holds', async () => {
    outcome = () => 'unchanged';
    expect(await sync.sync(volume(''), 'publish')).to.equal(true);
    expect(statusWrites).to.deep.equal([]);
    expect(await sync.sync({ ...volume('left by the last driver'), targetPath: '/t/b' }, 'resync')).to.equal(true);
    expect(statusWrites).to.deep.equal(['']);
    expect(events).to.deep.equal([]);
  });

  it('kubelet republishes (content unchanged) report only a changed failure, not one event per republish', async () => {
    await sync.sync(volume(''), 'publish');
    await sync.sync(volume(), 'republish');
    await sync.sync(volume(), 'republish');
    expect(events).to.have.length(1);
    outcome = () => {
      throw new SscError('permission-denied', 'HTTP 403', { reason: 'KubernetesAPIError' });
    };
    await sync.sync(volume(), 'republish');
    expect(events).to.have.length(2);
  });

  it('a Secret it does not manage: SecretOwnershipConflict on each publish, once from republishes and resyncs, and no retry', async () => {
    outcome = () => 'conflict';
    await sync.sync(volume(''), 'publish');
    await sync.sync(volume(''), 'publish');
    await sync.sync(volume(''), 'republish');
    await sync.sync(volume(), 'resync');
    await sync.sync(volume(), 'resync');
    expect(events.map((e) => e.replace(/:.*/, ''))).to.deep.equal([
      'Warning SecretOwnershipConflict',
      'Warning SecretOwnershipConflict',
    ]);
    expect(sync.isRetrying('/t/web-1')).to.equal(false);
    expect(statusWrites).to.deep.equal([]);
  });

  it('a rotation that could not update the Secret says so (SecretRotationFailed) and retries', async () => {
    await sync.sync(volume(''), 'rotation');
    expect(events.map((e) => e.replace(/:.*/, ''))).to.deep.equal([
      'Warning FailedToCreateSecret',
      'Warning SecretRotationFailed',
    ]);
    expect(sync.isRetrying('/t/web-1')).to.equal(true);
  });

  // NodeUnpublishVolume between a re-sync round's mount check and its sync: before, the
  // sync reported on the gone volume and started a retry loop that nothing ever stopped.
  it('a re-sync of a volume unpublished meanwhile reports nothing, starts no retry and keeps nothing', async () => {
    sync.forget('/t/web-1');
    mounted.delete('/t/web-1');
    expect(await sync.sync(volume(), 'resync')).to.equal(true);
    expect(events).to.deep.equal([]);
    expect(statusWrites).to.deep.equal([]);
    expect(sync.isRetrying('/t/web-1')).to.equal(false);
    expect(sleeper.pending).to.deep.equal([]);
  });

  it('a retry finding the volume unmounted (its unpublish was missed) stops without an attempt', async () => {
    let attempts = 0;
    const fail = outcome;
    outcome = (o) => {
      attempts++;
      return fail(o);
    };
    await sync.sync(volume(''), 'publish');
    expect(attempts).to.equal(1);
    mounted.delete('/t/web-1');
    await sleeper.release();
    expect(attempts, 'no attempt on an unmounted volume').to.equal(1);
    expect(sync.isRetrying('/t/web-1')).to.equal(false);
    expect(sleeper.pending).to.deep.equal([]);
  });
});
