import { formatGoDuration } from '../../lib/duration.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import type { Sleep } from '../../lib/sleep.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { OwnerReference, Workload } from '../k8s/client/types.js';
import { appsPath } from '../k8s/resource-paths.js';
import { KeyedQueue } from '../../lib/concurrency.js';
import {
  decideRestart,
  formatRestartedAt,
  RESTARTED_AT_ANNOTATION,
  restartPatch,
  type RestartDecision,
} from './restart-decision.js';

type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

/** The apps/v1 resource of each workload kind. */
const RESOURCE: Readonly<Record<WorkloadKind, string>> = {
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
};

/** A patch refused because another node restarted the workload between our read and write: decide again, this often. */
const ATTEMPTS = 3;

/** The workload to restart for a pod's owners: ReplicaSet → its Deployment; StatefulSet and DaemonSet directly. */
export async function workloadOf(
  api: KubeApi,
  namespace: string,
  owners: readonly OwnerReference[] | undefined,
): Promise<{ kind: WorkloadKind; name: string } | undefined> {
  const owner = owners?.find((o) => o.controller) ?? owners?.[0];
  if (!owner) return undefined;
  if (owner.kind === 'StatefulSet' || owner.kind === 'DaemonSet') return { kind: owner.kind, name: owner.name };
  if (owner.kind !== 'ReplicaSet') return undefined;
  const rs = await api.get<Workload>(appsPath('replicasets', namespace, owner.name));
  const deployment = rs.metadata?.ownerReferences?.find((o) => o.kind === 'Deployment');
  return deployment ? { kind: 'Deployment', name: deployment.name } : undefined;
}

/** What the restarter needs. */
export interface WorkloadRestarterDeps {
  readonly api: KubeApi;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Waits until a deferred restart is due; rejects when the signal aborts (driver shutdown). */
  readonly sleep: Sleep;
  /** --workload-restart-min-interval: the least time between two restarts of one workload. */
  readonly minIntervalMs: number;
}

/** One restart request: the rotating pod and what was read about it. */
interface RestartRequest {
  readonly pod: PodRef;
  readonly owners: readonly OwnerReference[] | undefined;
  readonly spcName: string;
  readonly podCreated: Date | undefined;
}

/**
 * Restarts a pod's owning workload as `kubectl rollout restart` does, at most once per
 * --workload-restart-min-interval (from its restartedAt annotation). One that comes too
 * soon is deferred in memory (Warning `WorkloadRestartDeferred`), not dropped.
 */
export class WorkloadRestarter {
  /** Workloads with a deferred restart pending on this node; more requests for them wait for it. */
  private readonly pending = new Set<string>();
  /** Per workload, the restart decisions in order: one node decides one workload at a time. */
  private readonly decisions = new KeyedQueue();
  private readonly stopping = new AbortController();

  constructor(private readonly deps: WorkloadRestarterDeps) {}

  /** Restarts the workload owning `pod` (whose owners are given), now or deferred; never throws. */
  async restart(
    pod: PodRef,
    owners: readonly OwnerReference[] | undefined,
    spcName: string,
    podCreated?: Date,
  ): Promise<void> {
    const request: RestartRequest = { pod, owners, spcName, podCreated };
    try {
      const workload = await workloadOf(this.deps.api, pod.namespace, owners);
      if (!workload) {
        await this.deps.events.event(
          pod,
          'Warning',
          'WorkloadRestartSkipped',
          `SecretProviderClass ${spcName} asks for a restart on rotation, but the pod has no Deployment, StatefulSet or DaemonSet owner`,
        );
        return;
      }
      const key = `${pod.namespace}/${workload.kind}/${workload.name}`;
      if (this.pending.has(key)) return;
      // After the previous decision for this workload; each reports its own outcome.
      await this.decisions.run(key, () =>
        this.decideAndAct(request, workload).catch((err: unknown) => this.failed(request, err)),
      );
    } catch (err) {
      await this.failed(request, err);
    }
  }

  /** Cancels deferred restarts (driver shutdown). */
  stop(): void {
    this.stopping.abort(new Error('driver stopping'));
  }

  private async decideAndAct(request: RestartRequest, workload: { kind: WorkloadKind; name: string }): Promise<void> {
    const { pod, spcName } = request;
    const key = `${pod.namespace}/${workload.kind}/${workload.name}`;
    const path = appsPath(RESOURCE[workload.kind], pod.namespace, workload.name);
    // A request queued behind the one that deferred: that deferred restart covers it.
    if (this.pending.has(key)) return;
    for (let attempt = 1; ; attempt++) {
      const metadata = (await this.deps.api.get<Workload>(path)).spec?.template?.metadata;
      const now = this.deps.now();
      const decision = decideRestart({
        now,
        restartedAt: metadata?.annotations?.[RESTARTED_AT_ANNOTATION],
        podCreated: request.podCreated,
        minIntervalMs: this.deps.minIntervalMs,
      });
      if (decision.action === 'skip') return;
      if (decision.action === 'defer') {
        await this.defer(request, key, workload, decision);
        return;
      }
      try {
        await this.deps.api.patch(path, restartPatch(metadata, now));
      } catch (err) {
        // 422: the test operation failed, the template changed since we read it (another node restarted it).
        if (httpStatusOf(err) === 422 && attempt < ATTEMPTS) continue;
        throw err;
      }
      await this.deps.events.event(
        pod,
        'Normal',
        'WorkloadRestarted',
        `restarted ${workload.kind} ${pod.namespace}/${workload.name} because rotation changed the content of SecretProviderClass ${spcName}`,
      );
      this.deps.logger.info('restarted workload after rotation', { workload: key, spc: spcName });
      return;
    }
  }

  private async defer(
    request: RestartRequest,
    key: string,
    workload: { kind: WorkloadKind; name: string },
    decision: Extract<RestartDecision, { action: 'defer' }>,
  ): Promise<void> {
    const name = `${workload.kind} ${request.pod.namespace}/${workload.name}`;
    await this.deps.events.event(
      request.pod,
      'Warning',
      'WorkloadRestartDeferred',
      `rotation changed the content of SecretProviderClass ${request.spcName}, but ${name} was ` +
        `restarted at ${formatRestartedAt(decision.last)}, less than ` +
        `--workload-restart-min-interval (${formatGoDuration(this.deps.minIntervalMs)}) ago; it ` +
        `restarts at ${formatRestartedAt(decision.until)}. Content that changes on every read ` +
        `(docs/rotation.md) keeps restarting it this often`,
    );
    this.deps.logger.info('workload restart deferred', {
      workload: key,
      spc: request.spcName,
      until: decision.until.toISOString(),
    });
    this.pending.add(key);
    const wait = Math.max(0, decision.until.getTime() - this.deps.now().getTime());
    void this.deps.sleep(wait, this.stopping.signal).then(
      () => {
        this.pending.delete(key);
        return this.restart(request.pod, request.owners, request.spcName, request.podCreated);
      },
      () => {
        this.pending.delete(key);
      },
    );
  }

  private async failed(request: RestartRequest, err: unknown): Promise<void> {
    const { pod } = request;
    const message = fromKubeError(err, `restart the workload of pod ${pod.namespace}/${pod.name}`).message;
    this.deps.logger.warn('could not restart workload after rotation', {
      pod: `${pod.namespace}/${pod.name}`,
      error: message,
    });
    await this.deps.events.event(pod, 'Warning', 'WorkloadRestartFailed', message);
  }
}
