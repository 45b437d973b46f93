import { connectKubeApi } from '../driver/k8s/client/connect.js';
import { TokenRequests } from '../driver/k8s/token-requests.js';
import { ProviderClient } from '../driver/provider-client/client.js';
import { type HealthServer, startHealthServer } from '../lib/http-server.js';
import type { Logger } from '../lib/logging/logger.js';
import { createProcessRegistry } from '../lib/process-registry.js';
import { realSleep } from '../lib/sleep.js';
import { packageVersion } from '../lib/version.js';
import type { SyncControllerConfig } from './config.js';
import { SyncController } from './controller.js';
import { SyncControllerMetrics } from './metrics.js';
import { apiSyncPorts } from './sync-ports.js';

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

/** Wires the controller from its config and starts it. */
export async function startSyncController(
  config: SyncControllerConfig,
  logger: Logger,
): Promise<RunningSyncController> {
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
  const tokens = new TokenRequests(api, () => Date.now());
  const controller = new SyncController(api, {
    ports: (caches) => apiSyncPorts(api, providers, tokens, metrics, caches),
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
  });
  const servers: HealthServer[] = [];
  const ready = () => controller.ready;
  try {
    if (enabled(config.metricsAddr))
      servers.push(await startHealthServer(config.metricsAddr, registry, () => true, '--metrics-bind-address'));
    if (enabled(config.healthProbeAddr))
      servers.push(
        await startHealthServer(config.healthProbeAddr, registry, () => true, '--health-probe-bind-address', ready),
      );
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  controller.start();
  logger.info('sync controller started', {
    providerDir: config.providerDir,
    audiences: config.audiences.length,
    metricsPort: enabled(config.metricsAddr) ? servers[0]?.port : undefined,
    healthPort: enabled(config.healthProbeAddr) ? servers[servers.length - 1]?.port : undefined,
  });
  return {
    metricsPort: enabled(config.metricsAddr) ? servers[0]?.port : undefined,
    healthPort: enabled(config.healthProbeAddr) ? servers[servers.length - 1]?.port : undefined,
    async stop() {
      await controller.stop();
      providers.close();
      api.close();
      await Promise.all(servers.map((s) => s.close()));
      logger.info('sync controller stopped');
    },
  };
}
