// The SecretSync controller as a local process against a local control plane
// (local-control-plane.ts): its identity, its kubeconfig and its command line. Used by
// `demo-sync` and by the tests (test/support/sync-controller.ts).
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import { resourcePath } from '../driver/k8s/client/kube-api.js';
import type { TokenRequest } from '../driver/k8s/client/types.js';
import { writeTokenKubeconfig, type ControlPlane } from './local-control-plane.js';

/** The controller's ServiceAccount, bound by deploy/sync-controller/rbac.yaml. */
export const SYNC_CONTROLLER_SA = Object.freeze({ namespace: 'kube-system', name: 'secrets-store-sync-controller' });

/** What the controller logs once it runs. */
export const SYNC_CONTROLLER_STARTED = /sync controller started/;

/**
 * Writes a kubeconfig with a token (one hour) of the controller's ServiceAccount, minted
 * by `admin`: only deploy/sync-controller/rbac.yaml authorises it, as in a cluster.
 */
export async function writeSyncControllerKubeconfig(
  admin: KubeApi,
  plane: Pick<ControlPlane, 'url' | 'caFile'>,
  path: string,
): Promise<void> {
  const request = await admin.create<TokenRequest>(
    resourcePath({ version: 'v1', resource: 'serviceaccounts', ...SYNC_CONTROLLER_SA, subresource: 'token' }),
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 3600 } },
  );
  await writeTokenKubeconfig(path, plane, 'sync-controller', request.status?.token ?? '');
}

/** `secrets-store-csi sync-controller` arguments: providers in `providersDir`, HTTP servers on free loopback ports. */
export function localSyncControllerArgs(
  providersDir: string,
  kubeconfig: string,
  extra: readonly string[] = [],
): string[] {
  return [
    'sync-controller',
    `--provider-volume=${providersDir}`,
    `--kubeconfig=${kubeconfig}`,
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    ...extra,
  ];
}

/**
 * The controller's environment: PATH, `home` as HOME (no ~/.kube/config of the user's is
 * read), and a pod name and uid standing in for the downward API's.
 */
export function localSyncControllerEnv(home: string, pod = { name: 'ssc-0', uid: 'u-1' }): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: home,
    SYNC_CONTROLLER_POD_NAME: pod.name,
    SYNC_CONTROLLER_POD_UID: pod.uid,
  };
}
