import { httpStatusOf } from '../driver/k8s/api-errors.js';
import type { KubeApi } from '../driver/k8s/client/kube-api.js';
import type { KubeObject, Secret } from '../driver/k8s/client/types.js';
import { corePath, secretProviderClassPath } from '../driver/k8s/resource-paths.js';
import type { TokenRequests } from '../driver/k8s/token-requests.js';
import type { ProviderClient } from '../driver/provider-client/client.js';
import { withApiRefusal } from './api-refusal.js';
import type { MountRequest } from '../proto/gen/v1alpha1/MountRequest.js';
import type { SyncPorts } from './reconcile.js';
import { FIELD_MANAGER, type SecretSync, secretSyncPath } from './secret-sync.js';
import type { SyncCaches } from './controller.js';
import type { SyncControllerMetrics } from './metrics.js';
import { SharedMounts } from './shared-mount.js';
import type { SyncHashes } from './sync-hash.js';

/** undefined for a 404, else the answer (other errors propagate). */
async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (httpStatusOf(err) === 404) return undefined;
    throw err;
  }
}

/** A provider Mount call, counted in secretsync_provider_mount_total. */
function countedMount(providers: ProviderClient, metrics: SyncControllerMetrics) {
  return async (provider: string, request: MountRequest) => {
    try {
      const res = await providers.mount(provider, request);
      metrics.providerCall(provider, true);
      return res;
    } catch (err) {
      metrics.providerCall(provider, false);
      throw err;
    }
  };
}

/** One Mount for identical requests (`--share-provider-mounts`), or one per SecretSync. */
export function syncMounts(
  providers: ProviderClient,
  metrics: SyncControllerMetrics,
  share: boolean,
): { mount: SyncPorts['mount']; clear(): void } {
  const call = countedMount(providers, metrics);
  if (!share) return { mount: (provider, request) => call(provider, request), clear: () => undefined };
  const shared = new SharedMounts(call, (provider) => metrics.providerShared(provider));
  return {
    mount: (provider, request, triggeredAt) => shared.mount(provider, request, triggeredAt),
    clear: () => shared.clear(),
  };
}

/**
 * The reconcile's ports on the real API and providers. The class is read from the
 * watched cache when it holds it (no request per reconcile), else from the API.
 */
export function apiSyncPorts(
  api: KubeApi,
  mount: SyncPorts['mount'],
  tokens: TokenRequests,
  hashes: SyncHashes,
  caches: SyncCaches,
): SyncPorts {
  return {
    hash: (data, inputs) => hashes.hash(data, inputs),
    getClass: async (namespace, name) =>
      caches.cachedClass(namespace, name) ??
      (await unlessNotFound(() => api.get<KubeObject>(secretProviderClassPath(namespace, name)))),
    mint: async (spec) => {
      try {
        return await tokens.token(spec);
      } catch (err) {
        const what = `request a token for ServiceAccount ${spec.namespace}/${spec.serviceAccount} (audience ${spec.audience})`;
        throw withApiRefusal(err, what);
      }
    },
    mount,
    getSecret: async (namespace, name) => {
      const cached = caches.managedSecret(namespace, name);
      if (cached !== 'unknown') return cached;
      return unlessNotFound(() => api.get<Secret>(corePath('secrets', namespace, name)));
    },
    applySecret: async (body) => {
      const path = corePath('secrets', body.metadata?.namespace, body.metadata?.name);
      // Forced: only a Secret that is absent or owned by the SecretSync gets here
      // (ownershipProblem), and fields someone edited out of band are taken back.
      // A refusal reaches the condition as the API server's own message (reconcile.ts), as SSC's.
      caches.wroteSecret(await api.apply<Secret>(path, body, FIELD_MANAGER, true));
    },
    patchStatus: async (ss, status) => {
      const path = secretSyncPath(ss.metadata?.namespace, ss.metadata?.name, 'status');
      // Whole lists replace (merge patch): conditions as computed; a missing field stays.
      caches.stored(await api.mergePatch<SecretSync>(path, { status }));
    },
  };
}
