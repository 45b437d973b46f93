import { randomBytes } from 'node:crypto';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import { fromKubeError } from './api-errors.js';
import type { KubeApi } from './client/kube-api.js';
import { corePath } from './resource-paths.js';

/** Event reasons the driver emits on Pods (upstream's names where they exist). */
export type EventReason =
  | 'SecretOwnershipConflict'
  | 'FailedToCreateSecret'
  | 'SecretCreated'
  | 'SecretUpdated'
  | 'SecretSyncDisabled'
  | 'MountFailed'
  | 'MountRotationComplete'
  | 'MountRotationFailed'
  | 'SecretRotationComplete'
  | 'SecretRotationFailed'
  | 'WorkloadRestarted'
  | 'WorkloadRestartFailed'
  | 'WorkloadRestartSkipped'
  | 'WorkloadRestartDeferred';

/** Records Kubernetes Events on a Pod. Messages must never contain secret data. */
export interface EventRecorder {
  event(pod: PodRef, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void>;
}

/** The component name events are reported under. */
export const EVENT_COMPONENT = 'secrets-store-csi-driver';

/**
 * Writes core/v1 Events through the API. A failure to record an event is logged and
 * never fails the operation it describes.
 */
export class ApiEventRecorder implements EventRecorder {
  constructor(
    private readonly api: KubeApi,
    private readonly nodeId: string,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  async event(pod: PodRef, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void> {
    const time = this.now().toISOString();
    try {
      await this.api.create(corePath('events', pod.namespace), {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${pod.name}.${randomBytes(8).toString('hex')}`, namespace: pod.namespace },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component: EVENT_COMPONENT, host: this.nodeId },
        reportingComponent: EVENT_COMPONENT,
        reportingInstance: `${EVENT_COMPONENT}-${this.nodeId}`,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      });
    } catch (err) {
      this.logger.warn('could not record event', {
        pod: `${pod.namespace}/${pod.name}`,
        reason,
        error: fromKubeError(err, 'create Event').message,
      });
    }
  }
}
