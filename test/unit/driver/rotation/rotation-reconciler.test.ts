import { expect } from 'chai';
import { csiVolumeOf, mountGroupOf, volumeNameOf } from '../../../../driver/kubernetes-mode/api-volumes.js';
import { slimPod } from '../../../../driver/kubernetes-mode/node-watches.js';
import { RotationReconciler, type RefreshReport, type RotationVolume } from '../../../../driver/rotation/reconciler.js';
import { RotationSchedule } from '../../../../driver/rotation/schedule.js';
import { ClassBackoff } from '../../../../driver/rotation/class-backoff.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const pod = { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: 'default' };
const volume = (
  targetPath: string,
  provider = 'file',
  intervalMs = 60_000,
  refreshRequested = false,
): RotationVolume => ({ targetPath, pod, spcName: 's', provider, intervalMs, refreshRequested });

function harness(volumes: RotationVolume[], outcome: (v: RotationVolume) => RefreshReport | Promise<RefreshReport>) {
  let now = 1_000_000;
  const calls: string[] = [];
  const metrics: string[] = [];
  const reconciler = new RotationReconciler({
    source: { list: async () => volumes },
    refresher: {
      refresh: async (v) => {
        calls.push(v.targetPath);
        return outcome(v);
      },
    },
    schedule: new RotationSchedule(),
    backoff: new ClassBackoff(() => 0.5),
    metrics: {
      reconciled: (p, rotated) => metrics.push(`${p}:${rotated}`),
      reconcileFailed: (p, e, rotated) => metrics.push(`${p}:error:${e}:${rotated}`),
    },
    logger: createLogger({ component: 'test', silent: true }),
    now: () => now,
    sleep: async () => undefined,
    defaultIntervalMs: 60_000,
    concurrencyPerProvider: 2,
  });
  return {
    reconciler,
    calls,
    metrics,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('RotationReconciler.runRound', () => {
  it('refreshes every volume in the first round, then only the due ones', async () => {
    const h = harness([volume('/a'), volume('/b', 'file', 10_000)], () => ({ result: 'unchanged', provider: 'file' }));
    expect(await h.reconciler.runRound()).to.include({ volumes: 2, refreshed: 2, changed: 0, failed: 0 });
    h.advance(11_500);
    const report = await h.reconciler.runRound();
    expect(report.refreshed).to.equal(1);
    expect(h.calls).to.deep.equal(['/a', '/b', '/b']);
  });

  it('counts changed and failed volumes and records upstream metrics (rotated on errors too)', async () => {
    const h = harness([volume('/a'), volume('/b', 'vault'), volume('/c', 'vault')], (v): RefreshReport =>
      v.targetPath === '/a'
        ? { result: 'changed', provider: 'file' }
        : {
            result: 'failed',
            provider: 'vault',
            errorType: v.targetPath === '/b' ? 'ProviderTimeout' : 'KubernetesAPIError',
            rotated: v.targetPath === '/c',
          },
    );
    expect(await h.reconciler.runRound()).to.include({ refreshed: 3, changed: 1, failed: 2 });
    expect(h.metrics.sort()).to.deep.equal([
      'file:true',
      'vault:error:KubernetesAPIError:true',
      'vault:error:ProviderTimeout:false',
    ]);
  });

  it('runs a volume whose refresh was requested even when it is not due', async () => {
    const volumes = [volume('/a')];
    const h = harness(volumes, () => ({ result: 'unchanged', provider: 'file' }));
    await h.reconciler.runRound();
    volumes[0] = volume('/a', 'file', 60_000, true);
    expect((await h.reconciler.runRound()).refreshed).to.equal(1);
  });

  it('treats a refresher that throws as a failure of that volume only', async () => {
    const h = harness([volume('/a'), volume('/b')], (v) => {
      if (v.targetPath === '/a') throw new Error('bug');
      return { result: 'unchanged', provider: 'file' };
    });
    expect(await h.reconciler.runRound()).to.include({ refreshed: 2, failed: 1 });
  });

  it('never overlaps rounds: a round slower than the interval is followed by one round, not run beside it or made up for in a burst', async () => {
    let now = 0;
    let active = 0;
    let maxActive = 0;
    let lists = 0;
    const waits: number[] = [];
    let fourRounds!: () => void;
    const listed = new Promise<void>((resolve) => {
      fourRounds = resolve;
    });
    const reconciler = new RotationReconciler({
      source: {
        list: async () => {
          if (++lists === 4) fourRounds();
          return [volume('/a', 'file', 1_000), volume('/b', 'file', 1_000)];
        },
      },
      // Each refresh takes three intervals of the injected clock.
      refresher: {
        refresh: async () => {
          maxActive = Math.max(maxActive, ++active);
          await new Promise((r) => setImmediate(r));
          now += 3_000;
          active--;
          return { result: 'unchanged', provider: 'file' };
        },
      },
      schedule: new RotationSchedule(),
      backoff: new ClassBackoff(),
      metrics: { reconciled: () => undefined, reconcileFailed: () => undefined },
      logger: createLogger({ component: 'test', silent: true }),
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((r) => setImmediate(r));
      },
      defaultIntervalMs: 1_000,
      concurrencyPerProvider: 1,
    });
    reconciler.start();
    await listed;
    await reconciler.stop();
    expect(maxActive, 'one refresh at a time: rounds never run side by side').to.equal(1);
    // Overdue volumes wait for the next round: the loop always sleeps (at least 1 s, at most one interval).
    expect(waits.length).to.be.at.least(3);
    expect(waits.every((ms) => ms > 0 && ms <= 1_000)).to.equal(true);
  });

  it('stop() mid-round: the refreshes in flight finish, the queued ones never start, and stop() resolves', async () => {
    const release: (() => void)[] = [];
    let twoStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      twoStarted = resolve;
    });
    const volumes = ['/v1', '/v2', '/v3', '/v4', '/v5'].map((p) => volume(p));
    const h = harness(
      volumes,
      () =>
        new Promise<RefreshReport>((resolve) => {
          release.push(() => resolve({ result: 'unchanged', provider: 'file' }));
          if (release.length === 2) twoStarted();
        }),
    );
    h.reconciler.start();
    await started;
    expect(h.calls).to.deep.equal(['/v1', '/v2']); // concurrencyPerProvider: 2
    const stopped = h.reconciler.stop();
    for (const r of release) r();
    await stopped;
    expect(h.calls).to.deep.equal(['/v1', '/v2']);
  });

  it('loops until stop(), which waits for the loop to end', async () => {
    let refreshed!: () => void;
    const first = new Promise<void>((resolve) => {
      refreshed = resolve;
    });
    const h = harness([volume('/a')], () => {
      refreshed();
      return { result: 'unchanged', provider: 'file' };
    });
    h.reconciler.start();
    await first;
    await h.reconciler.stop();
    const calls = h.calls.length;
    await new Promise((r) => setImmediate(r));
    expect(calls).to.be.greaterThan(0);
    expect(h.calls.length).to.equal(calls);
  });
});

describe('RotationReconciler: backoff per class and service account', () => {
  const throttled: RefreshReport = {
    result: 'failed',
    provider: 'vault',
    errorType: 'GRPCProviderError',
    rotated: false,
  };
  const many = (n: number, serviceAccountName = 'default', spcName = 's'): RotationVolume[] =>
    Array.from({ length: n }, (_, i) => ({
      targetPath: `/${serviceAccountName}/${spcName}/${i}`,
      pod: { ...pod, name: `p${i}`, serviceAccountName },
      spcName,
      provider: 'vault',
      intervalMs: 60_000,
    }));

  it('a throttled class calls its provider for the first volumes only; the rest wait, with no failure reported for them', async () => {
    const h = harness(many(100), () => throttled);
    const report = await h.reconciler.runRound();
    // concurrencyPerProvider is 2: the two calls already out when the first 429 came back.
    expect(h.calls).to.have.length(2);
    expect(report).to.include({ refreshed: 100, failed: 2, deferred: 98 });
    expect(h.metrics).to.have.length(2);
  });

  it('after the wait one volume tries; the others follow only once it succeeded', async () => {
    let answer: RefreshReport = throttled;
    // Answers come a macrotask later, as a provider's do: calls started meanwhile would show.
    const h = harness(many(10), () => new Promise<RefreshReport>((resolve) => setImmediate(() => resolve(answer))));
    await h.reconciler.runRound();
    // Two failures in a row (the two first calls): the wait is 2 s, of which half is jitter (0.5 here): 1.5 s.
    h.advance(1_000);
    await h.reconciler.runRound();
    expect(h.calls, 'still backing off').to.have.length(2);
    h.advance(600);
    await h.reconciler.runRound();
    expect(h.calls, 'one trial call').to.have.length(3);
    h.advance(10_000);
    answer = { result: 'unchanged', provider: 'vault' };
    const report = await h.reconciler.runRound();
    // Due: the 7 volumes never tried (the 3 that failed wait on their own schedule).
    expect(report).to.include({ refreshed: 7, failed: 0, deferred: 6 });
    expect(h.calls, 'one more trial, which succeeds').to.have.length(4);
    expect((await h.reconciler.runRound()).deferred).to.equal(0);
    expect(h.calls, 'then the 6 volumes left').to.have.length(10);
  });

  it("honours the provider's pushback (grpc-retry-pushback-ms) instead of its own delay", async () => {
    const h = harness(many(5), () => ({ ...throttled, retryAfterMs: 30_000 }));
    await h.reconciler.runRound();
    const first = h.calls.length;
    h.advance(29_000);
    await h.reconciler.runRound();
    expect(h.calls).to.have.length(first);
    h.advance(1_000);
    await h.reconciler.runRound();
    expect(h.calls).to.have.length(first + 1);
  });

  it('backs off each class and service account on its own', async () => {
    const volumes = [...many(3, 'sa1'), ...many(3, 'sa2'), ...many(3, 'sa1', 'other')];
    const h = harness(volumes, (v) =>
      v.pod.serviceAccountName === 'sa1' && v.spcName === 's' ? throttled : { result: 'unchanged', provider: 'vault' },
    );
    const report = await h.reconciler.runRound();
    expect(report.failed).to.be.at.most(2);
    expect(h.calls.filter((c) => c.startsWith('/sa2/'))).to.have.length(3);
    expect(h.calls.filter((c) => c.startsWith('/sa1/other/'))).to.have.length(3);
  });

  it('a backing-off class does not make the loop spin: it sleeps until the group may call again', async () => {
    const waits: number[] = [];
    let now = 0;
    let rounds = 0;
    let done!: () => void;
    const three = new Promise<void>((resolve) => {
      done = resolve;
    });
    const reconciler = new RotationReconciler({
      source: { list: async () => many(20) },
      refresher: { refresh: async () => ({ ...throttled, retryAfterMs: 20_000 }) },
      schedule: new RotationSchedule(),
      backoff: new ClassBackoff(() => 0.5),
      metrics: { reconciled: () => undefined, reconcileFailed: () => undefined },
      logger: createLogger({ component: 'test', silent: true }),
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
        if (++rounds === 3) done();
        await new Promise((r) => setImmediate(r));
      },
      defaultIntervalMs: 60_000,
      concurrencyPerProvider: 1,
    });
    reconciler.start();
    await three;
    await reconciler.stop();
    expect(waits.slice(0, 3)).to.deep.equal([20_000, 20_000, 20_000]);
  });
});

describe("finding a pod's CSI volume for a target path", () => {
  const podObj = {
    spec: {
      containers: [],
      volumes: [
        { name: 'other', csi: { driver: 'secrets-store.csi.k8s.io', volumeAttributes: { secretProviderClass: 'a' } } },
        {
          name: 'secrets',
          csi: { driver: 'secrets-store.csi.k8s.io', volumeAttributes: { secretProviderClass: 'b' } },
        },
      ],
    },
  };
  it('reads the volume name from a kubelet target path', () => {
    expect(volumeNameOf('/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/secrets/mount')).to.equal('secrets');
    expect(volumeNameOf('/tmp/x')).to.equal(undefined);
  });
  it('finds the volume by name, else by class', () => {
    expect(
      csiVolumeOf(
        podObj,
        '/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/secrets/mount',
        'secrets-store.csi.k8s.io',
        'zzz',
      )?.volumeAttributes?.['secretProviderClass'],
    ).to.equal('b');
    expect(
      csiVolumeOf(podObj, '/tmp/x', 'secrets-store.csi.k8s.io', 'a')?.volumeAttributes?.['secretProviderClass'],
    ).to.equal('a');
    expect(csiVolumeOf(podObj, '/tmp/x', 'secrets-store.csi.k8s.io', 'none')).to.equal(undefined);
  });
});

describe('the mount group a refresh rebuilds from the pod (what kubelet sends as volume_mount_group)', () => {
  const cases: [string, { fsGroup?: unknown } | undefined, number | undefined][] = [
    ['fsGroup set', { fsGroup: 2000 }, 2000],
    ['fsGroup 0', { fsGroup: 0 }, 0],
    ['no fsGroup', {}, undefined],
    ['no securityContext', undefined, undefined],
    ['an fsGroup the API server would refuse', { fsGroup: -1 }, undefined],
  ];
  for (const [name, securityContext, gid] of cases) {
    it(`${name} → ${gid}`, () => {
      const pod = { spec: { ...(securityContext ? { securityContext } : {}), volumes: [] } } as never;
      expect(mountGroupOf(pod)).to.equal(gid);
      // The node's pod cache keeps fsGroup (and nothing else of the security context).
      expect(mountGroupOf(slimPod(pod))).to.equal(gid);
    });
  }

  it('the pod cache drops the rest of the security context', () => {
    const slim = slimPod({ spec: { securityContext: { fsGroup: 5, runAsUser: 1000 } as never, volumes: [] } });
    expect(slim.spec?.securityContext).to.deep.equal({ fsGroup: 5 });
  });
});
