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

/** The object an event is about. */
export interface InvolvedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** Who reports an event: the component and the instance (a node, a pod). */
export interface EventSource {
  readonly component: string;
  readonly host: string;
}

/**
 * Writes one core/v1 Event about `involved`. A failure to record it is logged and never
 * fails the operation it describes. Messages must never contain secret data.
 */
export async function recordEvent(
  api: Pick<KubeApi, 'create'>,
  source: EventSource,
  event: { involved: InvolvedObject; type: 'Normal' | 'Warning'; reason: string; message: string; time: Date },
  logger: Logger,
): Promise<void> {
  const { involved, type, reason, message } = event;
  const time = event.time.toISOString();
  try {
    await api.create(corePath('events', involved.namespace), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${involved.name}.${randomBytes(8).toString('hex')}`, namespace: involved.namespace },
      involvedObject: { ...involved },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: source.component, host: source.host },
      reportingComponent: source.component,
      reportingInstance: `${source.component}-${source.host}`,
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    });
  } catch (err) {
    logger.warn('could not record event', {
      object: `${involved.kind} ${involved.namespace}/${involved.name}`,
      reason,
      error: fromKubeError(err, 'create Event').message,
    });
  }
}

/** Writes core/v1 Events about Pods through the API (recordEvent). */
export class ApiEventRecorder implements EventRecorder {
  constructor(
    private readonly api: KubeApi,
    private readonly nodeId: string,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  async event(pod: PodRef, type: 'Normal' | 'Warning', reason: EventReason, message: string): Promise<void> {
    const involved = { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid };
    await recordEvent(
      this.api,
      { component: EVENT_COMPONENT, host: this.nodeId },
      { involved, type, reason, message, time: this.now() },
      this.logger,
    );
  }
}
