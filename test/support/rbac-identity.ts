// Identities for RBAC tests against the real kube-apiserver: clients that act as a named
// user (impersonated by the test admin), and driver identities bound to exactly a chosen
// set of ClusterRoles (ours from deploy/, upstream's, or a reduced set), so a test sees
// what the driver can do with that set and nothing more.
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createNamespace, readManifests, writeTokenKubeconfig, type KubeCluster } from './kube-cluster.js';

/** API clients acting as one user. */
export interface UserClients {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly objects: KubernetesObjectApi;
}

/** Clients that act as `user` (Impersonate-User from the system:masters admin; groups: system:authenticated). */
export function clientsAs(cluster: KubeCluster, user: string): UserClients {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.url, caFile: cluster.caFile, skipTLSVerify: false }],
    users: [{ name: 'as', token: cluster.adminToken, impersonateUser: user }],
    contexts: [{ name: 'as', cluster: 'test', user: 'as' }],
    currentContext: 'as',
  });
  return {
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(config),
  };
}

/** A ClusterRole as read from a manifest. */
export interface ClusterRoleManifest extends KubernetesObject {
  rules?: unknown[];
}

/** The ClusterRoles in YAML files (other kinds are skipped). */
export async function clusterRolesIn(files: readonly string[]): Promise<ClusterRoleManifest[]> {
  const roles: ClusterRoleManifest[] = [];
  for (const f of files)
    roles.push(...((await readManifests(f)).filter((o) => o.kind === 'ClusterRole') as ClusterRoleManifest[]));
  return roles;
}

/**
 * Writes a kubeconfig at `path` that acts as ServiceAccount `sa`, with a token from the
 * TokenRequest API (the test cluster runs no token controller).
 */
export async function writeServiceAccountKubeconfig(
  cluster: KubeCluster,
  sa: { namespace: string; name: string },
  path: string,
  expirationSeconds: number,
): Promise<void> {
  const request = await cluster.admin.core.createNamespacedServiceAccountToken({
    ...sa,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ServiceAccount ${sa.namespace}/${sa.name} returned no token`);
  await writeTokenKubeconfig(path, cluster, sa.name, token);
}

/** A driver identity: a ServiceAccount bound to copies of the given ClusterRoles. */
export interface BoundIdentity {
  /** Kubeconfig with the ServiceAccount's token, for the driver's --kubeconfig. */
  readonly kubeconfig: string;
  /** system:serviceaccount:<namespace>:<name>, as SubjectAccessReviews and audit events name it. */
  readonly user: string;
  /** Binds copies of more roles (a grant made while the driver runs). */
  grant(roles: readonly ClusterRoleManifest[]): Promise<void>;
  /** Deletes the role copies and their bindings (the namespace stays, like every test namespace). */
  remove(): Promise<void>;
}

/**
 * Creates a ServiceAccount and binds it to copies of `roles`, renamed with a random
 * suffix (their own names may already exist in the shared cluster, bound to the driver
 * of other tests), with no aggregation labels. The token comes from the TokenRequest API.
 */
export async function boundIdentity(
  cluster: KubeCluster,
  prefix: string,
  roles: readonly ClusterRoleManifest[],
): Promise<BoundIdentity> {
  const namespace = await createNamespace(cluster, prefix);
  const name = 'driver';
  await cluster.admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const rbac = cluster.admin.config.makeApiClient(RbacAuthorizationV1Api);
  const suffix = randomBytes(3).toString('hex');
  const created: string[] = [];
  async function grant(more: readonly ClusterRoleManifest[]): Promise<void> {
    for (const role of more) {
      const copy = `${role.metadata?.name ?? 'role'}-${suffix}`;
      await rbac.createClusterRole({ body: { metadata: { name: copy }, rules: role.rules as never } });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: copy },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: copy },
          subjects: [{ kind: 'ServiceAccount', name, namespace }],
        },
      });
      created.push(copy);
    }
  }
  await grant(roles);
  const kubeconfig = join(cluster.dir, `kubeconfig-${prefix}-${suffix}`);
  await writeServiceAccountKubeconfig(cluster, { namespace, name }, kubeconfig, 4 * 3600);
  return {
    kubeconfig,
    user: `system:serviceaccount:${namespace}:${name}`,
    grant,
    async remove() {
      for (const copy of created) {
        await rbac.deleteClusterRoleBinding({ name: copy }).catch(() => undefined);
        await rbac.deleteClusterRole({ name: copy }).catch(() => undefined);
      }
    },
  };
}

/** One authorization question: may `user` do `verb` on group/resource[/subresource] (in `namespace`)? */
export interface AccessQuestion {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

/** Asks the API server's authorizer (a SubjectAccessReview, as the admin) whether `user` may do it. */
export async function allowed(
  cluster: KubeCluster,
  user: string,
  q: AccessQuestion,
  groups: readonly string[] = ['system:authenticated'],
): Promise<boolean> {
  const review = await cluster.admin.config.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user,
        groups: [...groups],
        resourceAttributes: {
          verb: q.verb,
          group: q.group,
          resource: q.resource,
          subresource: q.subresource ?? '',
          namespace: q.namespace ?? '',
          name: q.name ?? '',
        },
      },
    },
  });
  return review.status?.allowed === true;
}

/** One request as the API server's audit log records it, reduced to the RBAC right it used. */
export interface AuditedCall {
  readonly verb: string;
  readonly group: string;
  /** With its subresource: `serviceaccounts/token`. */
  readonly resource: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly code: number;
}

/** The requests `user` made, from the cluster's audit log (see start-cluster.sh), in order. */
export async function auditedCalls(cluster: KubeCluster, user: string): Promise<AuditedCall[]> {
  const text = await readFile(cluster.auditLog, 'utf8').catch(() => '');
  const calls: AuditedCall[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes(user)) continue;
    const event = JSON.parse(line) as {
      user?: { username?: string };
      verb?: string;
      objectRef?: { apiGroup?: string; resource?: string; subresource?: string; name?: string; namespace?: string };
      responseStatus?: { code?: number };
    };
    if (event.user?.username !== user || !event.objectRef?.resource) continue;
    const ref = event.objectRef;
    calls.push({
      verb: event.verb ?? '',
      group: ref.apiGroup ?? '',
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : (ref.resource ?? ''),
      ...(ref.name !== undefined ? { name: ref.name } : {}),
      ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}),
      code: event.responseStatus?.code ?? 0,
    });
  }
  return calls;
}
