import { expect } from 'chai';
import type { PodStatusItem } from '../../../../driver/pod-status/pod-status-item.js';
import type { ObjectMeta } from '../../../../driver/k8s/client/types.js';
import { SecretResync, secretResyncIntervalMs } from '../../../../driver/secret-sync/secret-resync.js';
import type { SyncedVolume } from '../../../../driver/secret-sync/volume-secret-sync.js';
import type { SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

describe('secretResyncIntervalMs: within a rotation interval with rotation, else --secret-resync-interval', () => {
  const table: [number, boolean, number, number][] = [
    [300_000, false, 120_000, 300_000],
    [300_000, true, 120_000, 120_000],
    [300_000, true, 600_000, 300_000],
    [2_000, true, 1_000, 1_000],
  ];
  for (const [resync, rotation, rotationMs, want] of table) {
    it(`resync ${resync} ms, rotation ${rotation ? `${rotationMs} ms` : 'off'} → ${want} ms`, () => {
      expect(
        secretResyncIntervalMs({
          secretResyncIntervalMs: resync,
          enableSecretRotation: rotation,
          rotationPollIntervalMs: rotationMs,
        }),
      ).to.equal(want);
    });
  }
});

describe("SecretResync: one round over this node's mounted volumes", () => {
  const item = (pod: string, spcName: string, targetPath: string, secretSyncError?: string): PodStatusItem => ({
    metadata: {
      namespace: 'ns',
      name: `${pod}-ns-${spcName}`,
      uid: `status-${pod}`,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod, uid: `uid-${pod}` }],
    },
    status: {
      podName: pod,
      secretProviderClassName: spcName,
      targetPath,
      ...(secretSyncError !== undefined ? { secretSyncError } : {}),
    },
  });
  const cls = (name: string, secretObjects: number): SecretProviderClass => ({
    namespace: 'ns',
    name,
    provider: 'file',
    parameters: {},
    annotations: {},
    secretObjects: Array.from({ length: secretObjects }, (_, i) => ({
      secretName: `${name}-${i}`,
      type: 'Opaque',
      labels: {},
      annotations: {},
      data: [{ objectName: 'a', key: 'a' }],
    })),
  });

  it("syncs mounted volumes whose class lists secretObjects, with the pod's owners (or its status object for a bare pod); skips the rest", async () => {
    const synced: SyncedVolume[] = [];
    const pods: Record<string, ObjectMeta | undefined> = {
      web: {
        uid: 'uid-web',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-rs', uid: 'rs-uid', controller: true },
        ],
      },
      bare: { uid: 'uid-bare' },
      leaving: { uid: 'uid-leaving', deletionTimestamp: '2024-01-01T00:00:00Z' },
      gone: undefined,
    };
    const resync = new SecretResync({
      podStatuses: async () => [
        item('web', 'sync', '/t/web', 'old error'),
        item('bare', 'sync', '/t/bare//'),
        item('web', 'plain', '/t/web-plain'),
        item('leaving', 'sync', '/t/leaving'),
        item('gone', 'sync', '/t/gone'),
        item('unmounted', 'sync', '/t/unmounted'),
        item('retrying', 'sync', '/t/retrying'),
        item('noclass', 'missing', '/t/noclass'),
      ],
      isMounted: async (t) => t !== '/t/unmounted',
      classes: {
        get: async (_ns, name) => {
          if (name === 'missing') throw new SscError('not-found', 'no');
          return cls(name, name === 'sync' ? 2 : 0);
        },
      },
      podMeta: async (pod) => pods[pod.name],
      volumes: {
        isRetrying: (t) => t === '/t/retrying',
        sync: async (v) => {
          synced.push(v);
          return v.pod.name !== 'bare';
        },
      },
      intervalMs: 1000,
      sleep: async () => undefined,
      logger: createLogger({ component: 'test', silent: true }),
    });
    expect(await resync.runRound()).to.deep.equal({ volumes: 2, failed: 1 });
    expect(
      synced.map((v) => [
        v.pod.name,
        v.pod.uid,
        v.targetPath,
        v.owners.map((o) => `${o.kind}/${o.name}/${o.uid}`),
        v.recordedError,
      ]),
    ).to.deep.equal([
      ['web', 'uid-web', '/t/web', ['ReplicaSet/web-rs/rs-uid'], 'old error'],
      ['bare', 'uid-bare', '/t/bare', ['SecretProviderClassPodStatus/bare-ns-sync/status-bare'], undefined],
    ]);
    expect(synced[0]?.owners[0]).to.not.have.property('controller');
  });

  it('a pod that could not be read is skipped this round, the others still run', async () => {
    const synced: string[] = [];
    const resync = new SecretResync({
      podStatuses: async () => [item('a', 'sync', '/t/a'), item('b', 'sync', '/t/b')],
      isMounted: async () => true,
      classes: { get: async (_ns, name) => cls(name, 1) },
      podMeta: async (pod) => {
        if (pod.name === 'a') throw new Error('HTTP 503');
        return { uid: `uid-${pod.name}` };
      },
      volumes: {
        isRetrying: () => false,
        sync: async (v) => {
          synced.push(v.pod.name);
          return true;
        },
      },
      intervalMs: 1000,
      sleep: async () => undefined,
      logger: createLogger({ component: 'test', silent: true }),
    });
    expect(await resync.runRound()).to.deep.equal({ volumes: 1, failed: 0 });
    expect(synced).to.deep.equal(['b']);
  });
});
