// The Go driver's identity in the shared test cluster: its own ServiceAccount, bound by
// upstream's v1.6.1 RBAC manifests (installed beside the peer binary by
// test/peers/install.sh), so a right upstream's roles lack shows up as a 403 here rather
// than being hidden by an admin kubeconfig or by our own roles.
import type { KubernetesObject } from '@kubernetes/client-node';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readManifests, type KubeCluster } from './kube-cluster.js';
import { writeServiceAccountKubeconfig } from './rbac-identity.js';

/** The Go driver's ServiceAccount (kube-system, as upstream's; a name of its own, so our driver's bindings stay apart). */
export const GO_DRIVER_SERVICE_ACCOUNT = { namespace: 'kube-system', name: 'upstream-go-driver' };
/** Prefix of the cluster-scoped names our copy of upstream's roles gets (upstream's own names are our driver's too). */
const NAME_PREFIX = 'upstream-go-driver-';

interface RbacObject extends KubernetesObject {
  roleRef?: { name: string };
  subjects?: unknown[];
}

/**
 * Upstream's ClusterRoles and ClusterRoleBindings, renamed with NAME_PREFIX and bound to
 * GO_DRIVER_SERVICE_ACCOUNT; their rules are untouched. ServiceAccount documents are dropped.
 */
export function rebindUpstreamRbac(objects: readonly KubernetesObject[]): KubernetesObject[] {
  const out: KubernetesObject[] = [];
  for (const obj of objects as readonly RbacObject[]) {
    if (obj.kind !== 'ClusterRole' && obj.kind !== 'ClusterRoleBinding') continue;
    const copy: RbacObject = {
      ...obj,
      metadata: { ...obj.metadata, name: `${NAME_PREFIX}${obj.metadata?.name ?? ''}` },
    };
    if (obj.kind === 'ClusterRoleBinding') {
      copy.roleRef = { ...obj.roleRef, name: `${NAME_PREFIX}${obj.roleRef?.name ?? ''}` };
      copy.subjects = [{ kind: 'ServiceAccount', ...GO_DRIVER_SERVICE_ACCOUNT }];
    }
    out.push(copy);
  }
  return out;
}

async function createKubeconfig(cluster: KubeCluster, binary: string): Promise<string> {
  const rbacDir = join(dirname(binary), 'deploy');
  const files = (await readdir(rbacDir)).filter((f) => f.endsWith('.yaml')).sort();
  if (files.length === 0)
    throw new Error(`no upstream RBAC manifests in ${rbacDir}: re-run test/peers/install.sh upstream-driver`);
  await cluster.admin.core.createNamespacedServiceAccount({
    namespace: GO_DRIVER_SERVICE_ACCOUNT.namespace,
    body: { metadata: { name: GO_DRIVER_SERVICE_ACCOUNT.name } },
  });
  for (const f of files) {
    for (const obj of rebindUpstreamRbac(await readManifests(join(rbacDir, f))))
      await cluster.admin.objects.create(obj);
  }
  const path = join(cluster.dir, 'go-driver-kubeconfig');
  await writeServiceAccountKubeconfig(cluster, GO_DRIVER_SERVICE_ACCOUNT, path, 24 * 3600);
  return path;
}

const kubeconfigs = new Map<string, Promise<string>>();

/** A kubeconfig for the Go driver, bound by upstream's RBAC; made once per cluster. */
export function goDriverKubeconfig(cluster: KubeCluster, binary: string): Promise<string> {
  let made = kubeconfigs.get(cluster.dir);
  if (!made) {
    made = createKubeconfig(cluster, binary);
    kubeconfigs.set(cluster.dir, made);
    made.catch(() => kubeconfigs.delete(cluster.dir));
  }
  return made;
}
