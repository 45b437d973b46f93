import type { Logger } from '../../lib/logging/logger.js';
import type { PodRef } from '../publish/publish-request.js';
import type { Sleep } from '../../lib/sleep.js';
import type { SecretProviderClassSource } from '../spc/local-source.js';
import { cleanTargetPath } from '../mount/target-path.js';
import type { PodStatusItem } from '../pod-status/pod-status-item.js';
import { fromKubeError, httpStatusOf } from '../k8s/api-errors.js';
import type { KubeApi } from '../k8s/client/kube-api.js';
import type { ObjectMeta, Pod } from '../k8s/client/types.js';
import { corePath } from '../k8s/resource-paths.js';
import type { WatchedCache } from '../k8s/watched-cache.js';
import { secretOwners } from './secret-owners.js';
import type { VolumeSecretSync } from './volume-secret-sync.js';

/**
 * How often mounted volumes' Secrets are checked: --secret-resync-interval, or the
 * rotation interval when rotation runs and that is shorter (a deleted Secret is
 * back within a rotation interval, and within 5 minutes without rotation).
 */
export function secretResyncIntervalMs(config: {
  secretResyncIntervalMs: number;
  enableSecretRotation: boolean;
  rotationPollIntervalMs: number;
}): number {
  return config.enableSecretRotation
    ? Math.min(config.secretResyncIntervalMs, config.rotationPollIntervalMs)
    : config.secretResyncIntervalMs;
}

/** A pod's metadata from this node's pod cache (when watched) or a GET; undefined when it is gone or is another pod of that name. */
export async function readLivePodMeta(
  api: Pick<KubeApi, 'get'>,
  pods: WatchedCache<Pod> | undefined,
  pod: PodRef,
): Promise<ObjectMeta | undefined> {
  let meta = pods?.get(pod.name, pod.namespace)?.metadata;
  if (!meta) {
    try {
      meta = (await api.get<Pod>(corePath('pods', pod.namespace, pod.name))).metadata ?? {};
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw fromKubeError(err, `get Pod ${pod.namespace}/${pod.name}`);
    }
  }
  return meta.uid === pod.uid ? meta : undefined;
}

/** What the resync loop needs; each a narrow port. */
export interface SecretResyncDeps {
  /** This node's SecretProviderClassPodStatus objects (a watch cache or a LIST): they survive a driver restart. */
  readonly podStatuses: () => Promise<PodStatusItem[]>;
  readonly isMounted: (targetPath: string) => Promise<boolean>;
  readonly classes: SecretProviderClassSource;
  /** The pod's metadata; undefined when it is gone or is another pod of that name. */
  readonly podMeta: (pod: PodRef) => Promise<ObjectMeta | undefined>;
  readonly volumes: Pick<VolumeSecretSync, 'sync' | 'isRetrying'>;
  readonly intervalMs: number;
  readonly sleep: Sleep;
  readonly logger: Logger;
}

/** What one resync round did. */
export interface ResyncReport {
  /** Mounted volumes whose class lists secretObjects. */
  readonly volumes: number;
  /** Of those, how many had a Secret that could not be synced. */
  readonly failed: number;
}

/**
 * The periodic Secret re-sync: every interval, for each volume this
 * node has mounted (found from its pod status objects, so a restarted driver still knows
 * them) whose class lists secretObjects, make sure each Secret exists with this pod's
 * owner, re-creating it from the mounted files. It never calls a provider and never
 * rewrites files. Rounds never overlap; a volume whose failed sync is being retried is
 * left to that retry.
 */
export class SecretResync {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly deps: SecretResyncDeps) {}

  /** Starts the loop; the first round runs one interval from now. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops the loop and waits for a round in progress. */
  async stop(): Promise<void> {
    this.abort.abort(new Error('secret resync stopped'));
    await this.loop;
  }

  /** One round (the loop calls this; tests may too). */
  async runRound(): Promise<ResyncReport> {
    const { deps } = this;
    let volumes = 0;
    let failed = 0;
    for (const item of await deps.podStatuses()) {
      if (this.abort.signal.aborted) break;
      const { podName, secretProviderClassName: spcName, targetPath: written, secretSyncError } = item.status ?? {};
      const namespace = item.metadata.namespace ?? '';
      if (!podName || !spcName || !written) continue;
      const targetPath = cleanTargetPath(written);
      if (deps.volumes.isRetrying(targetPath) || !(await deps.isMounted(targetPath))) continue;
      const spc = await deps.classes.get(namespace, spcName).catch(() => undefined);
      if (!spc || spc.secretObjects.length === 0) continue;
      const pod: PodRef = {
        name: podName,
        namespace,
        uid: item.metadata.ownerReferences?.find((o) => o.kind === 'Pod')?.uid ?? '',
        serviceAccountName: '',
      };
      let meta: ObjectMeta | undefined;
      try {
        meta = await deps.podMeta(pod);
      } catch (err) {
        deps.logger.warn('secret resync could not read the pod; trying next round', {
          pod: `${namespace}/${podName}`,
          error: (err as Error).message,
        });
        continue;
      }
      // A pod being deleted (or gone) keeps its volume until kubelet unpublishes it: its owners may be gone too.
      if (!meta || meta.deletionTimestamp) continue;
      volumes++;
      const owners = secretOwners(meta.ownerReferences, {
        metadata: { name: item.metadata.name ?? '', uid: item.metadata.uid },
      });
      if (!(await deps.volumes.sync({ pod, targetPath, spc, owners, recordedError: secretSyncError }, 'resync')))
        failed++;
    }
    if (failed > 0) deps.logger.info('secret resync round done', { volumes, failed });
    else deps.logger.debug('secret resync round done', { volumes, failed });
    return { volumes, failed };
  }

  private async run(): Promise<void> {
    const { deps } = this;
    while (!this.abort.signal.aborted) {
      try {
        await deps.sleep(deps.intervalMs, this.abort.signal);
      } catch {
        return;
      }
      try {
        await this.runRound();
      } catch (err) {
        deps.logger.warn('secret resync round failed; retrying next interval', { error: (err as Error).message });
      }
    }
  }
}
