import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

/** The Kubernetes API clients the driver uses, built once in main.ts. */
export interface KubeClients {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
}

/**
 * Builds the clients: from `--kubeconfig` when given, the in-cluster service account
 * when running in a pod (KUBERNETES_SERVICE_HOST), otherwise $KUBECONFIG / ~/.kube/config.
 */
export function createKubeClients(kubeconfigPath: string, env: Readonly<Record<string, string | undefined>>): KubeClients {
  const config = new KubeConfig();
  if (kubeconfigPath !== '') config.loadFromFile(kubeconfigPath);
  else if (env['KUBERNETES_SERVICE_HOST']) config.loadFromCluster();
  else config.loadFromDefault();
  if (!config.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set --kubeconfig, run in a pod, or use local mode (--spc-dir)');
  return { config, core: config.makeApiClient(CoreV1Api), custom: config.makeApiClient(CustomObjectsApi) };
}
