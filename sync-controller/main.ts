import { connectKubeApi } from '../driver/k8s/client/connect.js';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { TokenRequests } from '../driver/k8s/token-requests.js';
import { ProviderClient } from '../driver/provider-client/client.js';
import { type HealthServer, startHealthServer } from '../lib/http-server.js';
import type { Logger } from '../lib/logging/logger.js';
import { createProcessRegistry } from '../lib/process-registry.js';
import type { Registry } from 'prom-client';
import { realSleep } from '../lib/sleep.js';
import { packageVersion } from '../lib/version.js';
import type { SyncControllerConfig } from './config.js';
import { SyncController } from './controller.js';
import { apiSyncEvents } from './sync-events.js';
import { SyncControllerMetrics } from './metrics.js';
import { apiSyncPorts, syncMounts } from './sync-ports.js';
import { SyncHashes } from './sync-hash.js';
import { campaign, type Candidate, leaseNamespace } from './leadership.js';

/** Upstream's lifetime of the tokens it requests for providers. */
const TOKEN_EXPIRATION_SECONDS = 600;

/** A running controller: its HTTP ports (when bound) and how to stop it. */
export interface RunningSyncController {
  readonly metricsPort: number | undefined;
  readonly healthPort: number | undefined;
  stop(): Promise<void>;
}

/** "" and "0" switch an HTTP server off, as controller-runtime's bind addresses. */
function enabled(addr: string): boolean {
  return addr !== '' && addr !== '0';
}

/** The /metrics server and the /healthz + /readyz server, each unless switched off; none left open on failure. */
async function startServers(config: SyncControllerConfig, registry: Registry, ready: () => boolean) {
  let metricsServer: HealthServer | undefined;
  try {
    metricsServer = enabled(config.metricsAddr)
      ? await startHealthServer(config.metricsAddr, registry, () => true, '--metrics-bind-address')
      : undefined;
    const healthServer = enabled(config.healthProbeAddr)
      ? await startHealthServer(config.healthProbeAddr, registry, () => true, '--health-probe-bind-address', ready)
      : undefined;
    return { metricsServer, healthServer };
  } catch (err) {
    await metricsServer?.close();
    throw err;
  }
}

/** The controller on the API and the providers, not started. */
function newController(
  config: SyncControllerConfig,
  api: KubeApi,
  mounts: ReturnType<typeof syncMounts>,
  metrics: SyncControllerMetrics,
  logger: Logger,
): SyncController {
  const tokens = new TokenRequests(api, () => Date.now());
  return new SyncController(api, {
    ports: (caches) => apiSyncPorts(api, mounts.mount, tokens, new SyncHashes(), caches),
    settings: {
      audiences: config.audiences,
      tokenExpirationSeconds: TOKEN_EXPIRATION_SECONDS,
      pod: { name: config.podName, uid: config.podUid },
      now: () => new Date(),
    },
    metrics,
    logger: logger.child({ component: 'secretsync' }),
    sleep: realSleep,
    concurrency: config.concurrency,
    pollIntervalMs: config.rotationPollIntervalMs,
    random: Math.random,
    event: apiSyncEvents(api, config.podName, logger),
  });
}

/** Wires the controller from its config and starts it (at once, or once this replica leads). */
export async function startSyncController(
  config: SyncControllerConfig,
  logger: Logger,
  /** Leadership lost: the process must end now (run.ts exits with 1). */
  onLeadershipLost: () => void = () => undefined,
): Promise<RunningSyncController> {
  const election = config.leaderElection && {
    ...config.leaderElection,
    namespace: await leaseNamespace(config.leaderElection),
  };
  const registry = createProcessRegistry();
  const metrics = new SyncControllerMetrics(registry);
  const api = connectKubeApi(config.kubeconfig, process.env, {
    userAgent: `secrets-store-csi-sync-controller/${packageVersion()}`,
    observe: (method, code) => metrics.apiRequest(method, code),
  });
  const providers = new ProviderClient({
    providerDirs: [config.providerDir],
    maxCallRecvMsgSize: config.maxCallRecvMsgSize,
    timeoutMs: config.providerTimeoutMs,
    logger,
    sleep: realSleep,
  });
  const mounts = syncMounts(providers, metrics, config.shareProviderMounts);
  const controller = newController(config, api, mounts, metrics, logger);
  let candidate: Candidate | undefined;
  // A follower is ready: it serves its probes and waits to lead; the leader once its caches listed.
  const ready = () => (candidate !== undefined && !candidate.leading) || controller.ready;
  const { metricsServer, healthServer } = await startServers(config, registry, ready);
  const servers = [metricsServer, healthServer].filter((s) => s !== undefined);
  if (election) {
    metrics.leading(election.leaseName, false);
    candidate = campaign(api, election, config.podName, controller, {
      logger,
      leading: (leading) => metrics.leading(election.leaseName, leading),
      lost: onLeadershipLost,
    });
  } else controller.start();
  logger.info('sync controller started', {
    providerDir: config.providerDir,
    audiences: config.audiences.length,
    metricsPort: metricsServer?.port,
    healthPort: healthServer?.port,
    leaderElection: election ? `${election.namespace}/${election.leaseName}` : 'off',
  });
  return {
    metricsPort: metricsServer?.port,
    healthPort: healthServer?.port,
    async stop() {
      if (candidate) await candidate.stop();
      else await controller.stop();
      mounts.clear();
      providers.close();
      api.close();
      await Promise.all(servers.map((s) => s.close()));
      logger.info('sync controller stopped');
    },
  };
}
