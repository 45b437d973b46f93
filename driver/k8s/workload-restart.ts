import type { Logger } from '../../proto/runtime/logger.js';
import type { PodRef } from '../csi/requests.js';
import { fromKubeError } from './api-errors.js';
import type { EventRecorder } from './event-recorder.js';
import type { KubeApi } from './client/kube-api.js';
import type { OwnerReference, Workload } from './client/types.js';
import { appsPath } from './resource-paths.js';

/** The pod-template annotation `kubectl rollout restart` sets. */
export const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

/** The apps/v1 resource of each workload kind. */
const RESOURCE: Readonly<Record<WorkloadKind, string>> = { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets' };

/** The workload to restart for a pod's owners: ReplicaSet → its Deployment; StatefulSet and DaemonSet directly. */
export async function workloadOf(api: KubeApi, namespace: string, owners: readonly OwnerReference[] | undefined): Promise<{ kind: WorkloadKind; name: string } | undefined> {
  const owner = owners?.find((o) => o.controller) ?? owners?.[0];
  if (!owner) return undefined;
  if (owner.kind === 'StatefulSet' || owner.kind === 'DaemonSet') return { kind: owner.kind, name: owner.name };
  if (owner.kind !== 'ReplicaSet') return undefined;
  const rs = await api.get<Workload>(appsPath('replicasets', namespace, owner.name));
  const deployment = rs.metadata?.ownerReferences?.find((o) => o.kind === 'Deployment');
  return deployment ? { kind: 'Deployment', name: deployment.name } : undefined;
}

/**
 * Restarts a pod's owning workload the way `kubectl rollout restart` does: a new
 * `kubectl.kubernetes.io/restartedAt` pod-template annotation. Pods of one workload
 * that rotate together restart it once per `minGapMs`.
 */
export class WorkloadRestarter {
  private readonly lastRestart = new Map<string, number>();

  constructor(private readonly api: KubeApi, private readonly events: EventRecorder, private readonly logger: Logger, private readonly now: () => Date, private readonly minGapMs: number) {}

  /** Restarts the workload owning `pod` (whose owners are given); never throws. */
  async restart(pod: PodRef, owners: readonly OwnerReference[] | undefined, spcName: string, podCreated?: Date): Promise<void> {
    try {
      const workload = await workloadOf(this.api, pod.namespace, owners);
      if (!workload) {
        await this.events.event(pod, 'Warning', 'WorkloadRestartSkipped', `SecretProviderClass ${spcName} asks for a restart on rotation, but the pod has no Deployment, StatefulSet or DaemonSet owner`);
        return;
      }
      const key = `${pod.namespace}/${workload.kind}/${workload.name}`;
      const now = this.now();
      if (now.getTime() - (this.lastRestart.get(key) ?? 0) < this.minGapMs) return;
      this.lastRestart.set(key, now.getTime());
      const body = [{ op: 'add', path: `/spec/template/metadata/annotations`, value: {} }, { op: 'add', path: `/spec/template/metadata/annotations/${RESTARTED_AT_ANNOTATION.replace('/', '~1')}`, value: now.toISOString() }];
      const annotations = await this.read(workload.kind, workload.name, pod.namespace);
      // Another node (or an earlier round) already restarted it after this pod was created.
      const restartedAt = Date.parse(annotations?.[RESTARTED_AT_ANNOTATION] ?? '');
      if (podCreated && restartedAt > podCreated.getTime()) return;
      const patch = annotations ? body.slice(1) : body;
      await this.patch(workload.kind, workload.name, pod.namespace, patch);
      await this.events.event(pod, 'Normal', 'WorkloadRestarted', `restarted ${workload.kind} ${pod.namespace}/${workload.name} because rotation changed the content of SecretProviderClass ${spcName}`);
      this.logger.info('restarted workload after rotation', { workload: key, spc: spcName });
    } catch (err) {
      const message = fromKubeError(err, `restart the workload of pod ${pod.namespace}/${pod.name}`).message;
      this.logger.warn('could not restart workload after rotation', { pod: `${pod.namespace}/${pod.name}`, error: message });
      await this.events.event(pod, 'Warning', 'WorkloadRestartFailed', message);
    }
  }

  /** The pod template's annotations (undefined when it has no annotations map). */
  private async read(kind: WorkloadKind, name: string, namespace: string): Promise<Record<string, string> | undefined> {
    const obj = await this.api.get<Workload>(appsPath(RESOURCE[kind], namespace, name));
    return obj.spec?.template?.metadata?.annotations;
  }

  private async patch(kind: WorkloadKind, name: string, namespace: string, body: object[]): Promise<void> {
    await this.api.patch(appsPath(RESOURCE[kind], namespace, name), body);
  }
}
