import { expect } from 'chai';
import type * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDriverConfig } from '../../../../driver/config.js';
import { nodeHandlers } from '../../../../driver/csi/node-service.js';
import type { KubeApi } from '../../../../driver/k8s/client/kube-api.js';
import type { EventRecorder } from '../../../../driver/k8s/event-recorder.js';
import { kubernetesHooks } from '../../../../driver/kubernetes-mode/publish-hooks.js';
import { wirePublisher } from '../../../../driver/main.js';
import { DriverMetrics } from '../../../../driver/metrics/driver-metrics.js';
import { DirMounter, type Mounter } from '../../../../driver/mount/mounter.js';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';
import { TargetLocks } from '../../../../driver/mount/target-locks.js';
import { PodStatusWriter } from '../../../../driver/pod-status/pod-status.js';
import type { PublishRequest } from '../../../../driver/publish/publish-request.js';
import type { VolumePublisher } from '../../../../driver/publish/publisher.js';
import { RecordIndex } from '../../../../driver/rotation/record-store.js';
import { createRotation, recordIndexDir } from '../../../../driver/rotation/rotation-mode.js';
import { VolumeSecretSync } from '../../../../driver/secret-sync/volume-secret-sync.js';
import type { SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { AtomicWriter } from '../../../../driver/volume/atomic-writer.js';
import type { ObjectVersion } from '../../../../driver/volume/payload.js';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';

// NodeUnpublishVolume tells the driver's one TargetLifecycle, and every part that keeps
// state per target forgets it there. Each part here is made as the driver makes it (the
// publisher by main.ts's wirePublisher, rotation by createRotation), sharing one lifecycle;
// two volumes are published, one is unpublished, and each part is asked what it still
// remembers: all of the volume that stays, nothing of the one that went. A part that did
// not subscribe keeps remembering the volume that went, and the test names it.

const logger = createLogger({ component: 'test', silent: true });
const events: EventRecorder = { event: async () => undefined };
const spc: SecretProviderClass = {
  namespace: 'ns',
  name: 'creds',
  provider: 'fake',
  parameters: {},
  secretObjects: [
    { secretName: 'app', type: 'Opaque', data: [{ objectName: 'a', key: 'a' }], labels: {}, annotations: {} },
  ],
  annotations: {},
};

/** A provider answering one file, or failing once `failing` is set. */
function provider() {
  const state = { failing: false };
  return {
    state,
    mount: async () => {
      if (state.failing) throw new SscError('unavailable', 'provider down');
      return {
        files: [{ path: 'a', mode: 0o644, contents: Buffer.from('v1') }],
        object_version: [{ id: 'a', version: 'v1' }],
        error: null,
      };
    },
  };
}

/** An API server stand-in that accepts every request and counts the writes. */
function acceptingApi(): { api: KubeApi; writes: string[] } {
  const writes: string[] = [];
  const object = { metadata: { name: 'o', namespace: 'ns', uid: 'uid', ownerReferences: [] }, status: {} };
  const write = async (path: string) => {
    writes.push(path);
    return object;
  };
  const api = { create: write, patch: write, replace: write, delete: write, get: async () => object };
  return { api: api as unknown as KubeApi, writes };
}

/** A mounter whose unmount leaves the files: what a part remembers of them would still show. */
function keepingFiles(mounter: Mounter): Mounter {
  return Object.assign(Object.create(mounter) as Mounter, { unmount: async () => undefined });
}

/** Calls NodeUnpublishVolume as kubelet would, through the node service's gRPC handler. */
async function unpublish(deps: Parameters<typeof nodeHandlers>[0], targetPath: string): Promise<void> {
  const request = { volume_id: 'v', target_path: targetPath };
  const call = Object.assign(new EventEmitter(), { request, cancelled: false, getDeadline: () => Infinity });
  const handler = nodeHandlers(deps).NodeUnpublishVolume as grpc.handleUnaryCall<unknown, unknown>;
  await new Promise<void>((resolve, reject) =>
    handler(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err) => (err ? reject(err) : resolve())),
  );
}

/** The node service over `publisher`, told of unpublished targets through `targets`. */
function nodeService(publisher: VolumePublisher, targets: TargetLifecycle, locks: TargetLocks) {
  const mounter = keepingFiles(new DirMounter());
  return { nodeId: 'node-a', publisher, mounter, locks, targets, metrics: new DriverMetrics(), logger };
}

/**
 * The targets in rotation's index once its queued removal of `gone` has had its turn: each
 * look is file work of its own, queued behind the removal (bounded: a removal never
 * queued leaves `gone` listed).
 */
async function indexedTargets(index: RecordIndex, gone: string): Promise<string[]> {
  let listed = await index.list();
  for (let i = 0; i < 100 && listed.includes(gone); i++) listed = await index.list();
  return listed;
}

describe('NodeUnpublishVolume: every part that keeps state per target forgets the target', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-unpublish-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const request = (name: string): PublishRequest => ({
    volumeId: 'v',
    targetPath: join(dir, name),
    spcName: spc.name,
    pod: { name: name, namespace: 'ns', uid: `uid-${name}`, serviceAccountName: 'default' },
    volumeContext: {},
    secrets: {},
  });

  it('Kubernetes mode with Secret sync and rotation on kubelet republish: publisher, pod status hooks, Secret sync, rotation', async () => {
    const endpoint = `--endpoint=unix://${join(dir, 'csi.sock')}`;
    const config = parseDriverConfig(
      [endpoint, '--nodeid=node-a', '--enable-secret-rotation', '--rotation-mode=republish'],
      {},
    );
    const targets = new TargetLifecycle();
    const locks = new TargetLocks();
    const mounter = new DirMounter();
    const { api, writes } = acceptingApi();
    const rotation = createRotation(config, mounter, new DriverMetrics(), logger, targets);
    const secretSync = new VolumeSecretSync({
      targets,
      secrets: {
        sync: async () => {
          throw new SscError('unavailable', 'API down');
        },
      },
      events,
      recordError: async () => undefined,
      classes: { get: async () => spc },
      isMounted: (t) => mounter.isMounted(t),
      synced: () => undefined,
      logger,
      // Retries wait until the test ends (forget or stop aborts them).
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')))),
      random: () => 0,
    });
    const podStatus = new PodStatusWriter(api, logger);
    const kube = kubernetesHooks({
      targets,
      api,
      nodeId: 'node-a',
      podStatus,
      secrets: secretSync,
      events,
      logger,
      now: () => new Date(0),
    });
    const writer = new AtomicWriter<readonly ObjectVersion[]>({ logger });
    const fake = provider();
    const classes = { get: async () => spc };
    const publisher = wirePublisher(
      { locks, mounter, providers: fake, logger, classes, targets, writer },
      kube,
      rotation,
    );

    const stays = request('stays');
    const goes = request('goes');
    for (const r of [stays, goes]) await publisher.publish(r);
    // A rotation that fails leaves a lastError on each pod status, which the hooks remember.
    fake.state.failing = true;
    for (const r of [stays, goes]) await publisher.publish(r, {}, 'rotation').catch(() => undefined);

    await unpublish(nodeService(publisher, targets, locks), goes.targetPath);

    const remembered = async (target: string) => {
      const parts = {
        'publisher (its atomic writer)': writer.tagOf(target) !== undefined,
        'Secret sync (a retry)': secretSync.isRetrying(target),
        // Fresh (skipped) while its last refresh is remembered; due (rotated) once forgotten.
        'rotation (its schedule)': rotation.republish.decide(target, spc, stays.pod) === 'skip',
      };
      // An unchanged rotation round writes the pod status only to clear a lastError it remembers.
      const before = writes.length;
      const volume = { request: { ...stays, targetPath: target }, spc, versions: [], changed: false };
      await kube.hook({ ...volume, firstMount: false, origin: 'rotation', skipped: false }, {});
      return { ...parts, 'Kubernetes hooks (a lastError)': writes.length > before };
    };
    expect(await remembered(stays.targetPath)).to.deep.equal({
      'publisher (its atomic writer)': true,
      'Secret sync (a retry)': true,
      'rotation (its schedule)': true,
      'Kubernetes hooks (a lastError)': true,
    });
    expect(await remembered(goes.targetPath)).to.deep.equal({
      'publisher (its atomic writer)': false,
      'Secret sync (a retry)': false,
      'rotation (its schedule)': false,
      'Kubernetes hooks (a lastError)': false,
    });
    await secretSync.stop();
  });

  it("local mode with the reconciler in dir mode: publisher, rotation's volume records", async () => {
    const endpoint = `--endpoint=unix://${join(dir, 'csi.sock')}`;
    const config = parseDriverConfig(
      [endpoint, '--nodeid=node-a', '--enable-secret-rotation', '--mount-mode=dir', `--spc-dir=${dir}`],
      {},
    );
    const targets = new TargetLifecycle();
    const locks = new TargetLocks();
    const mounter = new DirMounter();
    const rotation = createRotation(config, mounter, new DriverMetrics(), logger, targets);
    const writer = new AtomicWriter<readonly ObjectVersion[]>({ logger });
    const classes = { get: async () => spc };
    const parts = { locks, mounter, providers: provider(), logger, classes, targets, writer };
    const publisher = wirePublisher(parts, undefined, rotation);

    const stays = request('stays');
    const goes = request('goes');
    for (const r of [stays, goes]) await publisher.publish(r);

    await unpublish(nodeService(publisher, targets, locks), goes.targetPath);

    const index = await indexedTargets(new RecordIndex(recordIndexDir(config.socketPath)), goes.targetPath);
    const remembered = (target: string) => ({
      'publisher (its atomic writer)': writer.tagOf(target) !== undefined,
      "rotation (the volume's index entry)": index.includes(target),
    });
    expect(remembered(stays.targetPath)).to.deep.equal({
      'publisher (its atomic writer)': true,
      "rotation (the volume's index entry)": true,
    });
    expect(remembered(goes.targetPath)).to.deep.equal({
      'publisher (its atomic writer)': false,
      "rotation (the volume's index entry)": false,
    });
  });
});
