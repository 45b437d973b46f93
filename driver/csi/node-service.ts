import type { NodeHandlers } from '../../proto/gen/csi/v1/Node.js';
import type { NodePublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import type { NodePublishVolumeResponse } from '../../proto/gen/csi/v1/NodePublishVolumeResponse.js';
import type { NodeUnpublishVolumeRequest__Output } from '../../proto/gen/csi/v1/NodeUnpublishVolumeRequest.js';
import type { NodeUnpublishVolumeResponse } from '../../proto/gen/csi/v1/NodeUnpublishVolumeResponse.js';
import { SscError, toSscError } from '../../lib/errors.js';
import type { InFlightCalls } from '../../lib/grpc/in-flight.js';
import type { Logger } from '../../lib/logging/logger.js';
import { unary, type AsyncUnaryHandler } from '../../lib/grpc/unary.js';
import type { DriverMetrics } from '../metrics/driver-metrics.js';
import type { Mounter } from '../mount/mounter.js';
import { PublishError, type VolumePublisher } from '../publish/publisher.js';
import type { TargetLifecycle } from '../mount/target-lifecycle.js';
import type { TargetLocks } from '../mount/target-locks.js';
import { parsePublishRequest, parseUnpublishRequest } from './requests.js';

/** What the Node service needs. */
export interface NodeServiceDeps {
  readonly nodeId: string;
  readonly publisher: VolumePublisher;
  readonly mounter: Mounter;
  readonly locks: TargetLocks;
  readonly metrics: DriverMetrics;
  readonly logger: Logger;
  /** Told after a successful NodeUnpublishVolume: every part that keeps state per target forgets it. */
  readonly targets: TargetLifecycle;
  /** Publishes and unpublishes in flight, for shutdown to cancel and wait for (a first mount must not outlive the driver). */
  readonly calls?: InFlightCalls;
  /**
   * Kubernetes mode (kubelet is the caller): a failed republish of a mounted volume is
   * answered OK when kubelet would treat its error as final (see answersRepublishOk).
   */
  readonly kubeletCaller?: boolean;
}

/** gRPC codes kubelet treats as "operation may still be in progress" (csi_client.go isFinalError): it keeps the mount dir. */
const NON_FINAL_KINDS: ReadonlySet<string> = new Set([
  'deadline-exceeded',
  'unavailable',
  'resource-exhausted',
  'aborted',
]);

/**
 * Whether a failed NodePublishVolume is answered OK: a kubelet republish of a volume
 * that stays mounted with its old content, failing with an error kubelet counts as
 * final. Kubelets without the fix for kubernetes#121271 delete the pod's mount dir on
 * such an error, leaving the pod stale content for good; upstream answers OK too.
 * Rotation runs (republish mode) always are. Non-final errors pass: kubelet keeps the dir.
 */
export function answersRepublishOk(err: unknown, kubeletCaller: boolean): boolean {
  if (!(err instanceof PublishError)) return false;
  if (err.origin === 'rotation') return true;
  return kubeletCaller && err.stillMounted && !NON_FINAL_KINDS.has(err.kind);
}

function unimplemented(method: string): () => Promise<never> {
  return async () => {
    throw new SscError('unimplemented', `${method} is not implemented by this node-only driver`);
  };
}

/** NodePublishVolume: parse, publish, count and log; a failed republish kubelet must not act on is answered OK. */
function publishVolume(
  deps: NodeServiceDeps,
): AsyncUnaryHandler<NodePublishVolumeRequest__Output, NodePublishVolumeResponse> {
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
        pod: `${req.pod.namespace}/${req.pod.name}`,
        spc: req.spcName,
        provider: published.spc.provider,
        targetPath: req.targetPath,
        objects: published.versions.length,
        changed: published.changed,
        // A republish that rotation found fresh: no provider call. Else why it ran (a republish may run as a rotation).
        ...(published.skipped ? { skipped: true } : { origin: published.origin }),
      });
      return {};
    } catch (err) {
      const e = toSscError(err);
      metrics.publishFailed(err instanceof PublishError ? err.provider : '', e.reason);
      if (answersRepublishOk(err, deps.kubeletCaller === true)) {
        // The old content stays mounted; MountRotationFailed (republish mode) or
        // MountFailed and the pod status's lastError say why.
        const message =
          (err as PublishError).origin === 'rotation'
            ? 'rotation on kubelet republish failed; the old content stays mounted'
            : 'kubelet republish failed; the old content stays mounted and kubelet is answered OK';
        logger.warn(message, {
          pod: `${req.pod.namespace}/${req.pod.name}`,
          targetPath: req.targetPath,
          code: e.kind,
          reason: e.reason,
          error: e.message,
        });
        return {};
      }
      logger.warn('NodePublishVolume failed', {
        pod: `${req.pod.namespace}/${req.pod.name}`,
        targetPath: req.targetPath,
        code: e.kind,
        reason: e.reason,
        error: e.message,
      });
      throw e;
    }
  };
}

/** NodeUnpublishVolume: unmount under the target's lock, then every part forgets the volume. */
function unpublishVolume(
  deps: NodeServiceDeps,
): AsyncUnaryHandler<NodeUnpublishVolumeRequest__Output, NodeUnpublishVolumeResponse> {
  const { logger, metrics } = deps;
  return async (raw) => {
    try {
      const req = parseUnpublishRequest(raw);
      await deps.locks.withLock(req.targetPath, () => deps.mounter.unmount(req.targetPath));
      deps.targets.forget(req.targetPath);
      metrics.unpublishSucceeded();
      logger.info('volume unpublished', { volumeId: req.volumeId, targetPath: req.targetPath });
      return {};
    } catch (err) {
      const e = toSscError(err);
      metrics.unpublishFailed(e.reason);
      if (e.kind !== 'invalid-argument')
        logger.warn('NodeUnpublishVolume failed', { targetPath: raw.target_path, code: e.kind, error: e.message });
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
    NodeGetCapabilities: unary(
      'NodeGetCapabilities',
      async () => ({ capabilities: [{ rpc: { type: 'VOLUME_MOUNT_GROUP' } }] }),
      logger,
    ),
    NodeStageVolume: unary('NodeStageVolume', unimplemented('NodeStageVolume'), logger),
    NodeUnstageVolume: unary('NodeUnstageVolume', unimplemented('NodeUnstageVolume'), logger),
    NodeGetVolumeStats: unary('NodeGetVolumeStats', unimplemented('NodeGetVolumeStats'), logger),
    NodeExpandVolume: unary('NodeExpandVolume', unimplemented('NodeExpandVolume'), logger),
  };
}
