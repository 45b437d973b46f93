import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import type { KubeCluster } from './kube-cluster.js';
import { startOpenBao, type OpenBao } from './openbao.js';

/**
 * OpenBao with its `kubernetes` auth method reviewing tokens against `cluster`: a
 * ServiceAccount `reviewer` in `namespace`, bound to system:auth-delegator, whose token
 * OpenBao sends with its TokenReviews. Policies and roles are the caller's. Its stop()
 * also removes the binding.
 */
export async function startOpenBaoWithKubernetesAuth(cluster: KubeCluster, namespace: string): Promise<OpenBao> {
  await cluster.admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'reviewer' } } });
  await cluster.admin.config.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `${namespace}-token-reviewer` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'reviewer', namespace }],
    },
  });
  const reviewer = await cluster.admin.core.createNamespacedServiceAccountToken({
    namespace,
    name: 'reviewer',
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const removeBinding = () =>
    cluster.admin.config
      .makeApiClient(RbacAuthorizationV1Api)
      .deleteClusterRoleBinding({ name: `${namespace}-token-reviewer` })
      .catch(() => undefined);
  let bao: OpenBao;
  try {
    bao = await startOpenBao();
  } catch (err) {
    await removeBinding();
    throw err;
  }
  const stopBao = bao.stop.bind(bao);
  bao.stop = async () => {
    await stopBao();
    await removeBinding();
  };
  try {
    await bao.enableAuth('kubernetes', 'kubernetes');
    await bao.write('auth/kubernetes/config', {
      kubernetes_host: cluster.url,
      kubernetes_ca_cert: await readFile(cluster.caFile, 'utf8'),
      token_reviewer_jwt: reviewer.status?.token,
    });
    return bao;
  } catch (err) {
    await bao.stop();
    throw err;
  }
}
