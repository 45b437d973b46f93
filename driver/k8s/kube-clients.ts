import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
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

/**
 * The kubeconfig's authentication, with one keep-alive HTTPS agent for all requests.
 * client-node builds a new https.Agent for every request, so every API call paid a
 * full TLS handshake: in a changed rotation round over 500 volumes (about 1,500 writes)
 * that was most of 19 s of driver CPU. The agent is rebuilt only when the TLS settings
 * the kubeconfig yields (CA, client certificate, server name, verification) change.
 */
export class PooledKubeAuthentication {
  private pooled: { readonly key: string; readonly agent: HttpsAgent } | undefined;

  constructor(private readonly config: KubeConfig) {}

  getName(): string {
    return 'kubeconfig with a pooled agent';
  }

  async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await this.config.applySecurityAuthentication(context);
    const fresh = context.getAgent();
    // Proxies and plain HTTP keep client-node's own agent.
    if (fresh?.constructor !== HttpsAgent) return;
    context.setAgent(this.agentFor((fresh as HttpsAgent).options));
  }

  /** The shared agent for these TLS options (same options, same agent). */
  agentFor(options: AgentOptions): HttpsAgent {
    const tls = [options.ca, options.cert, options.key, options.pfx, options.passphrase, options.rejectUnauthorized, options.servername];
    const key = createHash('sha256').update(JSON.stringify(tls.map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : v ?? null)))).digest('hex');
    if (this.pooled?.key !== key) {
      this.pooled?.agent.destroy();
      this.pooled = { key, agent: new HttpsAgent({ ...options, keepAlive: true, maxSockets: 16 }) };
    }
    return this.pooled.agent;
  }

  /** Closes the pooled connections (driver shutdown). */
  close(): void {
    this.pooled?.agent.destroy();
    this.pooled = undefined;
  }
}

/** Builds an API client whose every request (watches excepted) is aborted after `timeoutMs`. */
function clientWithTimeout<T>(config: KubeConfig, auth: PooledKubeAuthentication, Api: new (c: ReturnType<typeof createConfiguration>) => T, timeoutMs: number): T {
  const cluster = config.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  return new Api(createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
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
  const auth = new PooledKubeAuthentication(config);
  return {
    config,
    core: clientWithTimeout(config, auth, CoreV1Api, timeoutMs),
    custom: clientWithTimeout(config, auth, CustomObjectsApi, timeoutMs),
    storage: clientWithTimeout(config, auth, StorageV1Api, timeoutMs),
  };
}
