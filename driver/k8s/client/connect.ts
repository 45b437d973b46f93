import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { RequestObserver } from './http-transport.js';
import { KubeApi, API_REQUEST_TIMEOUT_MS, type WatchObserver } from './kube-api.js';
import { endpointFromKubeconfig, inClusterEndpoint, type ApiEndpoint } from './kubeconfig.js';

/** The --kubeconfig file's text; a startup error naming the flag and the file when it cannot be read. */
function readKubeconfigFlag(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `--kubeconfig ${path} does not exist`
        : `cannot read --kubeconfig ${path} (${code ?? 'error'})`,
      { cause: err },
    );
  }
}

/**
 * Where the driver finds its cluster: `--kubeconfig` when given, the in-cluster service
 * account when running in a pod (KUBERNETES_SERVICE_HOST), otherwise the files in
 * $KUBECONFIG (merged) or ~/.kube/config. Never a silent localhost default.
 */
export function resolveEndpoint(
  kubeconfigPath: string,
  env: Readonly<Record<string, string | undefined>>,
  home = homedir(),
): ApiEndpoint {
  if (kubeconfigPath !== '')
    return endpointFromKubeconfig([{ path: kubeconfigPath, content: readKubeconfigFlag(kubeconfigPath) }]);
  if (env['KUBERNETES_SERVICE_HOST']) return inClusterEndpoint(env);
  const listed = env['KUBECONFIG']
    ? env['KUBECONFIG'].split(delimiter).filter((p) => p !== '')
    : [join(home, '.kube', 'config')];
  // As kubectl: files in KUBECONFIG that do not exist are skipped.
  const present = listed.filter((p) => existsSync(p));
  if (present.length === 0)
    throw new Error(
      `no Kubernetes cluster configured (${listed.join(delimiter)} does not exist, not in a pod): set --kubeconfig, or use local mode with --spc-dir`,
    );
  return endpointFromKubeconfig(present.map((path) => ({ path, content: readFileSync(path, 'utf8') })));
}

/** The driver's API client (every request but watches times out after `timeoutMs`). */
export function connectKubeApi(
  kubeconfigPath: string,
  env: Readonly<Record<string, string | undefined>>,
  options: { timeoutMs?: number; userAgent?: string; observe?: RequestObserver; observeWatch?: WatchObserver } = {},
): KubeApi {
  return new KubeApi(resolveEndpoint(kubeconfigPath, env), {
    timeoutMs: options.timeoutMs ?? API_REQUEST_TIMEOUT_MS,
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
    ...(options.observeWatch ? { observeWatch: options.observeWatch } : {}),
  });
}
