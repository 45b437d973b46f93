import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PodRef } from '../../../../driver/publish/publish-request.js';
import type { EventReason } from '../../../../driver/k8s/event-recorder.js';
import { RepublishRotation } from '../../../../driver/rotation/republish-mode.js';
import type { SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { DirMounter } from '../../../../driver/mount/mounter.js';
import { PublishError, VolumePublisher } from '../../../../driver/publish/publisher.js';
import { TargetLocks } from '../../../../driver/mount/target-locks.js';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const pod: PodRef = { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: 'default' };
const INTERVAL = 60_000;

/** A publisher over a plain directory with RepublishRotation as its gate, a scripted provider, a fake clock and recorded events/metrics. */
function setup(dir: string) {
  let now = 1_000_000;
  let contents = 'v1';
  let failWith: SscError | undefined;
  let annotations: Record<string, string> = {};
  const calls: string[][] = [];
  const events: string[] = [];
  const metrics: string[] = [];
  const rotation = new RepublishRotation({
    config: { rotationPollIntervalMs: INTERVAL, driverName: 'secrets-store.csi.k8s.io' },
    now: () => now,
    logger: createLogger({ component: 'test', silent: true }),
    metrics: {
      reconciled: (p, rotated) => {
        metrics.push(`reconciled ${p} rotated=${rotated}`);
      },
      reconcileFailed: (p, e, rotated) => {
        metrics.push(`failed ${p} ${e} rotated=${rotated}`);
      },
    },
  });
  void rotation.start({
    event: async (_p: PodRef, type: string, reason: EventReason, message: string) => {
      events.push(`${type} ${reason}: ${message}`);
    },
  });
  const spc = (): SecretProviderClass => ({
    namespace: 'n',
    name: 's',
    provider: 'fake',
    parameters: {},
    secretObjects: [],
    annotations,
  });
  const publisher = new VolumePublisher({
    locks: new TargetLocks(),
    targets: new TargetLifecycle(),
    mounter: new DirMounter(),
    logger: createLogger({ component: 'test', silent: true }),
    now: () => new Date(now),
    classes: { get: async () => spc() },
    providers: {
      mount: async (_provider, request) => {
        calls.push((request.current_object_version ?? []).map((v) => `${v.id}=${v.version}`));
        if (failWith) throw failWith;
        return {
          files: [{ path: 'a', mode: 0o644, contents: Buffer.from(contents) }],
          object_version: [{ id: 'a', version: contents }],
          error: null,
        };
      },
    },
    hooks: rotation.hooks,
    failureHooks: rotation.failureHooks,
    republish: rotation,
  });
  const req = { volumeId: 'v', targetPath: join(dir, 't'), spcName: 's', pod, volumeContext: {}, secrets: {} };
  return {
    publisher,
    rotation,
    calls,
    events,
    metrics,
    req,
    advance: (ms: number) => {
      now += ms;
    },
    set: (c: string) => {
      contents = c;
    },
    fail: (e: SscError | undefined) => {
      failWith = e;
    },
    annotate: (a: Record<string, string>) => {
      annotations = a;
    },
    publish: () => publisher.publish(req),
  };
}

describe('RepublishRotation: rotation on kubelet republish (--rotation-mode=republish)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-republish-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('makes a republish within the interval a no-op: no provider call, nothing written, no event', async () => {
    const s = setup(dir);
    await s.publish();
    const before = await stat(join(s.req.targetPath, 'a'));
    s.advance(INTERVAL / 2);
    const again = await s.publish();
    expect([again.skipped, again.origin, s.calls.length]).to.deep.equal([true, 'kubelet', 1]);
    expect((await stat(join(s.req.targetPath, 'a'))).mtimeMs).to.equal(before.mtimeMs);
    expect([s.events, s.metrics]).to.deep.equal([[], []]);
  });

  it('refreshes a due republish as a rotation with the current versions; unchanged: nothing written, no event', async () => {
    const s = setup(dir);
    await s.publish();
    const inode = (await stat(join(s.req.targetPath, 'a'))).ino;
    s.advance(INTERVAL * 1.2);
    const due = await s.publish();
    expect([due.skipped, due.origin, due.changed]).to.deep.equal([false, 'rotation', false]);
    expect(s.calls).to.deep.equal([[], ['a=v1']]);
    expect((await stat(join(s.req.targetPath, 'a'))).ino).to.equal(inode);
    expect(s.events).to.deep.equal([]);
    expect(s.metrics).to.deep.equal(['reconciled fake rotated=false']);
  });

  it('writes a changed republish and says so once (MountRotationComplete); the next republish is a no-op again', async () => {
    const s = setup(dir);
    await s.publish();
    s.set('v2');
    s.advance(INTERVAL * 1.2);
    expect((await s.publish()).changed).to.equal(true);
    expect(await readFile(join(s.req.targetPath, 'a'), 'utf8')).to.equal('v2');
    expect(s.events).to.deep.equal([
      'Normal MountRotationComplete: rotated mounted content for SecretProviderClass s (objects: a)',
    ]);
    s.advance(1000);
    expect((await s.publish()).skipped).to.equal(true);
    expect(s.calls).to.have.length(2);
  });

  it('keeps the old content on a failed rotation, reports MountRotationFailed and backs off', async () => {
    const s = setup(dir);
    await s.publish();
    s.fail(new SscError('unavailable', 'vault sealed', { reason: 'ProviderError' }));
    s.advance(INTERVAL * 1.2);
    const error = await s.publish().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(PublishError);
    expect((error as PublishError).origin, 'the node service tells kubelet OK for these').to.equal('rotation');
    expect(await readFile(join(s.req.targetPath, 'a'), 'utf8')).to.equal('v1');
    expect(s.events).to.have.length(1);
    expect(s.events[0]).to.match(
      /^Warning MountRotationFailed: failed to publish volume v for pod n\/p, SecretProviderClass n\/s: .*vault sealed/,
    );
    expect(s.metrics).to.deep.equal(['failed fake ProviderError rotated=false']);
    // Backoff: two intervals after a failure, not one.
    s.advance(INTERVAL * 1.2);
    expect((await s.publish()).skipped).to.equal(true);
    s.fail(undefined);
    s.advance(INTERVAL);
    expect((await s.publish()).skipped).to.equal(false);
  });

  it("refreshes at once when the class's refresh-requested-at changes, and uses the class's interval", async () => {
    const s = setup(dir);
    s.annotate({ 'secrets-store.csi.k8s.io/refresh-requested-at': 't1' });
    await s.publish();
    s.advance(1000);
    expect((await s.publish()).skipped, 'an old request is no request').to.equal(true);
    s.annotate({ 'secrets-store.csi.k8s.io/refresh-requested-at': 't2' });
    expect((await s.publish()).skipped).to.equal(false);
    expect((await s.publish()).skipped, 'once per new value').to.equal(true);
    s.annotate({
      'secrets-store.csi.k8s.io/refresh-requested-at': 't2',
      'secrets-store.csi.k8s.io/rotation-poll-interval': '5s',
    });
    s.advance(5_600);
    expect((await s.publish()).skipped).to.equal(false);
  });

  it('forgets an unpublished target: its next publish is due', async () => {
    const s = setup(dir);
    await s.publish();
    s.rotation.forget(s.req.targetPath);
    expect(
      s.rotation.decide(
        s.req.targetPath,
        {
          namespace: 'n',
          name: 's',
          provider: 'fake',
          parameters: {},
          secretObjects: [],
          annotations: {},
        },
        pod,
      ),
    ).to.equal('rotate');
  });

  it("a throttled rotation holds back the other pods of the class and service account for the provider's pushback", async () => {
    const s = setup(dir);
    const other = { ...s.req, targetPath: join(dir, 't2'), pod: { ...pod, name: 'p2', uid: 'u2' } };
    const otherAccount = {
      ...s.req,
      targetPath: join(dir, 't3'),
      pod: { ...pod, name: 'p3', uid: 'u3', serviceAccountName: 'sa3' },
    };
    for (const r of [s.req, other, otherAccount]) await s.publisher.publish(r);
    s.fail(new SscError('resource-exhausted', 'vault throttled', { reason: 'VaultThrottled', retryAfterMs: 30_000 }));
    s.advance(INTERVAL * 1.2);
    await s.publish().catch(() => undefined);
    expect(s.calls).to.have.length(4);
    s.fail(undefined);
    expect((await s.publisher.publish(other)).skipped, 'same class and service account: waits').to.equal(true);
    expect(s.calls).to.have.length(4);
    expect((await s.publisher.publish(otherAccount)).skipped, 'another service account: its own backoff').to.equal(
      false,
    );
    s.advance(30_000);
    expect((await s.publisher.publish(other)).skipped, 'the pushback is over').to.equal(false);
    expect(s.events.filter((e) => e.includes('MountRotationFailed'))).to.have.length(1);
  });
});

describe('RepublishRotation.start: checks that kubelet republishes at all', () => {
  async function warningsWith(csiDriver: () => Promise<unknown>): Promise<string[]> {
    const warnings: string[] = [];
    const logger = createLogger({ component: 'test', silent: true });
    logger.warn = ((message: string, meta?: { error?: string }) => {
      warnings.push(meta?.error ? `${message}: ${meta.error}` : message);
      return logger;
    }) as typeof logger.warn;
    const rotation = new RepublishRotation({
      config: { rotationPollIntervalMs: INTERVAL, driverName: 'secrets-store.csi.k8s.io' },
      now: () => 0,
      logger,
      metrics: { reconciled: () => undefined, reconcileFailed: () => undefined },
      csiDriver: csiDriver as never,
    });
    await rotation.start(undefined);
    return warnings;
  }

  it('is quiet when the CSIDriver has requiresRepublish: true', async () => {
    expect(await warningsWith(async () => ({ spec: { requiresRepublish: true } }))).to.deep.equal([]);
  });

  it('warns when requiresRepublish is false or the CSIDriver is missing: nothing would rotate', async () => {
    expect(await warningsWith(async () => ({ spec: { requiresRepublish: false } }))).to.deep.equal([
      '--rotation-mode=republish: CSIDriver secrets-store.csi.k8s.io has requiresRepublish: false, so kubelet never republishes and mounted volumes are not rotated; set requiresRepublish: true (deploy/csidriver.yaml) or use --rotation-mode=reconciler',
    ]);
    expect((await warningsWith(async () => undefined))[0]).to.include(
      'CSIDriver secrets-store.csi.k8s.io does not exist',
    );
  });

  it('warns, and carries on, when the CSIDriver cannot be read', async () => {
    expect(
      await warningsWith(async () => {
        throw new Error('Kubernetes API refused to get CSIDriver: HTTP 403');
      }),
    ).to.deep.equal([
      '--rotation-mode=republish: could not read the CSIDriver to check requiresRepublish: Kubernetes API refused to get CSIDriver: HTTP 403',
    ]);
  });
});
