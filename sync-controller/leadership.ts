import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { IN_CLUSTER_DIR } from '../driver/k8s/client/kubeconfig.js';
import { LeaderElector } from '../driver/k8s/leader-election.js';
import type { Logger } from '../lib/logging/logger.js';
import { realSleep } from '../lib/sleep.js';
import type { LeaderElectionSettings } from './config.js';

/** What runs only while this replica leads. */
export interface LeaderWork {
  start(): void;
  stop(): Promise<void>;
}

/** A replica taking part in the election: whether it leads now, and how to leave. */
export interface Candidate {
  readonly leading: boolean;
  /** Stops the work (when leading), then releases the Lease. */
  stop(): Promise<void>;
}

/** The namespace of the controller's own pod, from its service account's mount; undefined out of a cluster. */
export async function podNamespace(dir = IN_CLUSTER_DIR): Promise<string | undefined> {
  try {
    return (await readFile(join(dir, 'namespace'), 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The Lease's namespace: the flag's, else the pod's own; throws naming the flag when neither is known. */
export async function leaseNamespace(settings: LeaderElectionSettings, inClusterDir?: string): Promise<string> {
  if (settings.namespace !== '') return settings.namespace;
  const own = await podNamespace(inClusterDir);
  if (own === undefined)
    throw new Error('--leader-election-namespace must be set when the controller does not run in a pod');
  return own;
}

/**
 * Runs `work` while this replica leads: waits for the Lease, starts the work, renews.
 * Leadership lost (no renewal within the renew deadline) calls `lost`: the process must end
 * at once, as controller-runtime's does, since another replica may already lead.
 */
export function campaign(
  api: KubeApi,
  settings: LeaderElectionSettings & { namespace: string },
  podName: string,
  work: LeaderWork,
  deps: { logger: Logger; leading: (leading: boolean) => void; lost: () => void },
): Candidate {
  let leading = false;
  const elector = new LeaderElector(
    api,
    {
      namespace: settings.namespace,
      name: settings.leaseName,
      // client-go's holder identity: host (here the pod's name) and a UUID, unique per process.
      identity: `${podName || hostname()}_${randomUUID()}`,
      leaseDurationMs: settings.leaseDurationMs,
      renewDeadlineMs: settings.renewDeadlineMs,
      retryPeriodMs: settings.retryPeriodMs,
    },
    {
      logger: deps.logger,
      sleep: realSleep,
      random: Math.random,
      monotonicMs: () => performance.now(),
      now: () => new Date(),
      leading: (now) => {
        leading = now;
        deps.leading(now);
      },
    },
  );
  const abort = new AbortController();
  const term = (async () => {
    await elector.acquire(abort.signal);
    work.start();
    if ((await elector.hold(abort.signal)) === 'lost') deps.lost();
  })().catch((err: unknown) => {
    if (abort.signal.aborted) return;
    deps.logger.error('leader election failed', { lease: elector.lease, error: (err as Error).message });
    deps.lost();
  });
  return {
    get leading() {
      return leading;
    },
    async stop() {
      abort.abort(new Error('stopping'));
      await term;
      if (leading) await work.stop();
      await elector.release();
    },
  };
}
