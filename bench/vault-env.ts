import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { OpenBao } from '../test/support/openbao.js';
import type { KubeCluster } from '../test/support/kube-cluster.js';

/**
 * The Vault side of the Vault-load benchmark: a real OpenBao (dev server, KV v2 at
 * secret/, a file audit device) with Kubernetes auth against the benchmark's real
 * kube-apiserver (TokenReview with a reviewer bound to system:auth-delegator), as a
 * cluster operator sets it up for HashiCorp's provider or ours.
 */

/** The Vault role and auth mount the class logs in with (the provider's default mount). */
export const VAULT_ROLE = 'bench';
export const VAULT_AUTH_MOUNT = 'kubernetes';
/** The audience of the CSIDriver's tokenRequests and of the role. */
export const VAULT_AUDIENCE = 'vault';
/** The workload's one ServiceAccount, and the token reviewer's. */
export const WORKLOAD_SERVICE_ACCOUNT = 'web';
export const REVIEWER_SERVICE_ACCOUNT = 'vault-token-reviewer';
/** Vault token TTL of a login, as HashiCorp's documented example role sets it. */
export const LOGIN_TTL = '20m';

/** One KV v2 secret the class mounts, and what its file must hold. */
export interface BenchSecret {
  readonly objectName: string;
  readonly secretPath: string;
  readonly value: string;
}

/** `count` secrets of `size` printable bytes at secret/data/bench/object-<i> (HashiCorp's path form). */
export function benchSecrets(count: number, size: number): BenchSecret[] {
  return Array.from({ length: count }, (_, i) => ({
    objectName: `object-${i}`,
    secretPath: `secret/data/bench/object-${i}`,
    value: randomBytes(size).toString('base64').slice(0, size),
  }));
}

/** The SecretProviderClass spec: provider vault, the role, every secret's `value` key. */
export function vaultClassSpec(secrets: readonly BenchSecret[]): Record<string, unknown> {
  const objects = stringify(
    secrets.map((s) => ({ objectName: s.objectName, secretPath: s.secretPath, secretKey: 'value' })),
  );
  return { provider: 'vault', parameters: { roleName: VAULT_ROLE, objects } };
}

/**
 * Binds the reviewer ServiceAccount (already in `namespace`) to system:auth-delegator,
 * configures Kubernetes auth on `bao` with its token, a read policy for secret/data/bench/*,
 * the role bound to the workload's ServiceAccount and audience, and writes the secrets.
 */
export async function configureVault(
  bao: OpenBao,
  cluster: KubeCluster,
  namespace: string,
  secrets: readonly BenchSecret[],
): Promise<void> {
  const rbac = cluster.admin.config.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `${namespace}-vault-token-reviewer` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: REVIEWER_SERVICE_ACCOUNT, namespace }],
    },
  });
  const reviewer = await cluster.admin.core.createNamespacedServiceAccountToken({
    namespace,
    name: REVIEWER_SERVICE_ACCOUNT,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  await bao.enableAuth(VAULT_AUTH_MOUNT, 'kubernetes');
  await bao.write(`auth/${VAULT_AUTH_MOUNT}/config`, {
    kubernetes_host: cluster.url,
    kubernetes_ca_cert: await readFile(cluster.caFile, 'utf8'),
    token_reviewer_jwt: reviewer.status?.token,
  });
  await bao.putPolicy(VAULT_ROLE, 'path "secret/data/bench/*" { capabilities = ["read"] }');
  await bao.write(`auth/${VAULT_AUTH_MOUNT}/role/${VAULT_ROLE}`, {
    bound_service_account_names: [WORKLOAD_SERVICE_ACCOUNT],
    bound_service_account_namespaces: [namespace],
    audience: VAULT_AUDIENCE,
    policies: [VAULT_ROLE],
    ttl: LOGIN_TTL,
  });
  for (const s of secrets) await bao.write(s.secretPath, { data: { value: s.value } });
}

/** The server's version from /v1/sys/health (for the results), or 'unknown'. */
export async function openBaoVersion(address: string): Promise<string> {
  try {
    const res = await fetch(`${address}/v1/sys/health`, { signal: AbortSignal.timeout(5_000) });
    return ((await res.json()) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
