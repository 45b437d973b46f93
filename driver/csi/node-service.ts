import type { NodeHandlers } from '../../proto/gen/csi/v1/Node.js';
import type { NodePublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { NodePublishVolumeResponse } from '../../proto/gen/csi/v1/NodePublishVolumeResponse.js';
import type { NodeUnpublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodeUnpublishVolumeRequest.js';
import type { NodeUnpublishVolumeResponse } from '../../proto/gen/csi/v1/NodeUnpublishVolumeResponse.js';
import { SscError, toSscError } from '../../proto/runtime/errors.js';
import type { InFlightCalls } from '../../proto/runtime/in-flight.js';
import type { Logger } from '../../proto/runtime/logger.js';
import { unary, type AsyncUnaryHandler } from '../../proto/runtime/unary.js';
import type { DriverMetrics } from '../metrics/driver-metrics.js';
import type { Mounter } from '../volume/mounter.js';
import { PublishError, type VolumePublisher } from '../volume/publisher.js';
import type { TargetLocks } from '../volume/target-locks.js';
import { parsePublishRequest, parseUnpublishRequest } from './requests.js';

/** What the Node service needs. */
export interface NodeServiceDeps {
  readonly nodeId: string;
  readonly publisher: VolumePublisher;
  readonly mounter: Mounter;
  readonly locks: TargetLocks;
  readonly metrics: DriverMetrics;
  readonly logger: Logger;
  /** Called after a successful NodeUnpublishVolume (rotation forgets the volume). */
  readonly onUnpublished?: (targetPath: string) => void;
  /** Publishes and unpublishes in flight, for shutdown to cancel and wait for (issue 9 item 7). */
  readonly calls?: InFlightCalls;
}

function unimplemented(method: string): () => Promise<never> {
  return async () => { throw new SscError('unimplemented', `${method} is not implemented by this node-only driver`); };
}

/** NodePublishVolume: parse, publish, count and log; a republish that rotation ran and that failed answers OK. */
function publishVolume(deps: NodeServiceDeps): AsyncUnaryHandler<NodePublishVolumeRequest__Output, NodePublishVolumeResponse> {
  const { logger, metrics } = deps;
  return async (raw, ctx) => {
    let req;
    try {
      req = parsePublishRequest(raw);
    } catch (err) {
      metrics.publishFailed('', toSscError(err).reason);
      throw err;
    }
    try {
      const published = await deps.publisher.publish(req, { deadline: ctx.deadline, signal: ctx.signal });
      metrics.publishSucceeded(published.spc.provider);
      logger.info('volume published', {
        pod: `${req.pod.namespace}/${req.pod.name}`, spc: req.spcName, provider: published.spc.provider,
        targetPath: req.targetPath, objects: published.versions.length, changed: published.changed,
        // A republish that rotation found fresh: no provider call. Else why it ran (a republish may run as a rotation).
        ...(published.skipped ? { skipped: true } : { origin: published.origin }),
      });
      return {};
    } catch (err) {
      const e = toSscError(err);
      metrics.publishFailed(err instanceof PublishError ? err.provider : '', e.reason);
      if (err instanceof PublishError && err.origin === 'rotation') {
        // A republish that rotation (--rotation-mode=republish) ran as a refresh: the old
        // content stays mounted and MountRotationFailed says why. Kubelet is told OK, as
        // upstream does: before kubernetes#121271 was fixed, kubelet deleted the target
        // directory of a republish that failed, leaving the pod nothing.
        logger.warn('rotation on kubelet republish failed; the old content stays mounted', { pod: `${req.pod.namespace}/${req.pod.name}`, targetPath: req.targetPath, reason: e.reason, error: e.message });
        return {};
      }
      logger.warn('NodePublishVolume failed', { pod: `${req.pod.namespace}/${req.pod.name}`, targetPath: req.targetPath, code: e.kind, reason: e.reason, error: e.message });
      throw e;
    }
  };
}

/** NodeUnpublishVolume: unmount under the target's lock, then every part forgets the volume. */
function unpublishVolume(deps: NodeServiceDeps): AsyncUnaryHandler<NodeUnpublishVolumeRequest__Output, NodeUnpublishVolumeResponse> {
  const { logger, metrics } = deps;
  return async (raw) => {
    try {
      const req = parseUnpublishRequest(raw);
      await deps.locks.withLock(req.targetPath, () => deps.mounter.unmount(req.targetPath));
      deps.publisher.forget(req.targetPath);
      deps.onUnpublished?.(req.targetPath);
      metrics.unpublishSucceeded();
      logger.info('volume unpublished', { volumeId: req.volumeId, targetPath: req.targetPath });
      return {};
    } catch (err) {
      const e = toSscError(err);
      metrics.unpublishFailed(e.reason);
      if (e.kind !== 'invalid-argument') logger.warn('NodeUnpublishVolume failed', { targetPath: raw.target_path, code: e.kind, error: e.message });
      throw e;
    }
  };
}

/**
 * CSI Node service: NodePublishVolume / NodeUnpublishVolume plus info and capabilities
 * (VOLUME_MOUNT_GROUP only). Stage/unstage, stats and expansion are UNIMPLEMENTED and not advertised.
 */
export function nodeHandlers(deps: NodeServiceDeps): NodeHandlers {
  const { logger } = deps;
  return {
    NodePublishVolume: unary('NodePublishVolume', publishVolume(deps), logger, undefined, deps.calls),
    NodeUnpublishVolume: unary('NodeUnpublishVolume', unpublishVolume(deps), logger, undefined, deps.calls),
    NodeGetInfo: unary('NodeGetInfo', async () => ({ node_id: deps.nodeId, max_volumes_per_node: 0 }), logger),
    // VOLUME_MOUNT_GROUP: kubelet then passes the pod's fsGroup as volume_mount_group and
    // leaves ownership to the driver, which writes the files for that group (ownership.ts).
    NodeGetCapabilities: unary('NodeGetCapabilities', async () => ({ capabilities: [{ rpc: { type: 'VOLUME_MOUNT_GROUP' } }] }), logger),
    NodeStageVolume: unary('NodeStageVolume', unimplemented('NodeStageVolume'), logger),
    NodeUnstageVolume: unary('NodeUnstageVolume', unimplemented('NodeUnstageVolume'), logger),
    NodeGetVolumeStats: unary('NodeGetVolumeStats', unimplemented('NodeGetVolumeStats'), logger),
    NodeExpandVolume: unary('NodeExpandVolume', unimplemented('NodeExpandVolume'), logger),
  };
}
