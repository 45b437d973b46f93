import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig, StorageV1Api, ServerConfiguration, createConfiguration, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

/** The Kubernetes API clients the driver uses, built once in Kubernetes mode. */
export interface KubeClients {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly storage: StorageV1Api;
}

/**
 * Longest a single API request may take. client-node sets no timeout; a half-open
 * connection would otherwise hold a volume's lock forever and block its unpublish.
 */
export const API_REQUEST_TIMEOUT_MS = 15_000;

/** Builds an API client whose every request (watches excepted) is aborted after `timeoutMs`. */
function clientWithTimeout<T>(config: KubeConfig, Api: new (c: ReturnType<typeof createConfiguration>) => T, timeoutMs: number): T {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  return new Api(createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: config },
    promiseMiddleware: [{
      pre: async (context: RequestContext) => { context.setSignal(AbortSignal.timeout(timeoutMs)); return context; },
      post: async (context: ResponseContext) => context,
    }],
  }));
}

/**
 * Builds the clients: from `--kubeconfig` when given, the in-cluster service account
 * when running in a pod (KUBERNETES_SERVICE_HOST), otherwise $KUBECONFIG / ~/.kube/config.
 */
export function createKubeClients(kubeconfigPath: string, env: Readonly<Record<string, string | undefined>>, timeoutMs = API_REQUEST_TIMEOUT_MS): KubeClients {
  const config = new KubeConfig();
  if (kubeconfigPath !== '') config.loadFromFile(kubeconfigPath);
  else if (env['KUBERNETES_SERVICE_HOST']) config.loadFromCluster();
  else {
    // client-node falls back to http://localhost:8080 when no kubeconfig exists: refuse that.
    const path = env['KUBECONFIG'] || join(homedir(), '.kube', 'config');
    if (!existsSync(path.split(':')[0] ?? path)) throw new Error(`no Kubernetes cluster configured (${path} does not exist, not in a pod): set --kubeconfig, or use local mode with --spc-dir`);
    config.loadFromDefault();
  }
  if (!config.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set --kubeconfig, run in a pod, or use local mode (--spc-dir)');
  return {
    config,
    core: clientWithTimeout(config, CoreV1Api, timeoutMs),
    custom: clientWithTimeout(config, CustomObjectsApi, timeoutMs),
    storage: clientWithTimeout(config, StorageV1Api, timeoutMs),
  };
}
