import { expect } from 'chai';
import { KubeApiError, type Query } from '../../../../driver/k8s/client/kube-api.js';
import type { KubeList, Secret, WatchEvent } from '../../../../driver/k8s/client/types.js';
import { MANAGED_LABEL, USED_SECRET_LABEL } from '../../../../driver/k8s/constants.js';
import { NamespacedWatches } from '../../../../driver/k8s/namespaced-watches.js';
import { usedSecretWatch } from '../../../../driver/kubernetes-mode/node-watches.js';
import { ManagedSecretWatches, REFUSED_RETRY_MS } from '../../../../driver/secret-sync/managed-secret-watches.js';
import { createLogger, type Logger } from '../../../../lib/logging/logger.js';

const managed = (namespace: string, name: string, resourceVersion = '1'): Secret => ({
  metadata: { namespace, name, resourceVersion, labels: { [MANAGED_LABEL]: 'true', [USED_SECRET_LABEL]: 'true' } },
  data: {},
});

/** A scripted API: Secrets per namespace, a list+watch per namespace path, 403s while `refuse` is set. */
class ScriptedApi {
  refuse = false;
  readonly requests: string[] = [];
  readonly stored = new Map<string, Secret[]>();
  /** Sends an event to the open watch of a namespace path. */
  readonly send = new Map<string, (event: WatchEvent<Secret>) => void>();
  private listed!: () => void;
  lists = new Promise<void>((resolve) => {
    this.listed = resolve;
  });

  async get<T>(path: string, query?: Query): Promise<T> {
    this.requests.push(`${query?.['limit'] === 1 ? 'PROBE' : 'LIST'} ${path} ${String(query?.['labelSelector'])}`);
    if (this.refuse) {
      const message = `secrets is forbidden: User "system:serviceaccount:kube-system:csi" cannot list resource "secrets" in API group "" in the namespace "a"`;
      throw new KubeApiError(403, JSON.stringify({ message }), 'GET', path);
    }
    const namespace = path.split('/')[4] ?? '';
    const list: KubeList<Secret> = { metadata: { resourceVersion: '10' }, items: this.stored.get(namespace) ?? [] };
    if (query?.['limit'] !== 1) this.listed();
    return list as T;
  }

  watch(path: string, _q: Query, onEvent: (e: WatchEvent<Secret>) => void, signal: AbortSignal): Promise<void> {
    this.requests.push(`WATCH ${path}`);
    this.send.set(path, onEvent);
    return new Promise((_resolve, reject) =>
      signal.addEventListener('abort', () => {
        this.send.delete(path);
        reject(signal.reason as Error);
      }),
    );
  }
}

const IDLE_MS = 600_000;

function watchesOver(
  api: ScriptedApi,
  now: () => number = () => 0,
): { watches: ManagedSecretWatches; secrets: NamespacedWatches<Secret>; warnings: string[] } {
  const warnings: string[] = [];
  const logger = createLogger({ component: 'test', silent: true });
  logger.warn = ((message: string, meta?: { error?: string }) => {
    warnings.push(`${message}: ${meta?.error ?? ''}`);
    return logger;
  }) as Logger['warn'];
  const sleep = async () => undefined;
  const secrets = new NamespacedWatches<Secret>(api as never, usedSecretWatch, logger, sleep, { idleMs: IDLE_MS, now });
  return { watches: new ManagedSecretWatches(secrets, api as never, logger, now), secrets, warnings };
}

const settled = () => new Promise((r) => setImmediate(r));

describe("ManagedSecretWatches: Secret sync's use of the used=true Secret watches of the namespaces with synced volumes", () => {
  it('cannot tell before the namespace is listed; then answers from the watch: present, absent, deleted, changed', async () => {
    const api = new ScriptedApi();
    api.stored.set('a', [managed('a', 's1')]);
    const { watches, secrets } = watchesOver(api);
    expect(watches.lookup('a', 's1'), 'not watched yet').to.equal(undefined);
    watches.ensure('a');
    await api.lists;
    await settled();
    expect(watches.lookup('a', 's1')?.secret?.metadata?.name).to.equal('s1');
    expect(watches.lookup('a', 'other')).to.deep.equal({ secret: undefined });
    api.send.get('/api/v1/namespaces/a/secrets')?.({ type: 'DELETED', object: managed('a', 's1', '11') });
    expect(watches.lookup('a', 's1')).to.deep.equal({ secret: undefined });
    expect(api.requests).to.deep.equal([
      `PROBE /api/v1/namespaces/a/secrets ${USED_SECRET_LABEL}=true`,
      `LIST /api/v1/namespaces/a/secrets ${USED_SECRET_LABEL}=true`,
      'WATCH /api/v1/namespaces/a/secrets',
    ]);
    await secrets.stop();
  });

  it('keeps the namespaces its syncs use; the others stop once idle: none of the whole cluster, one per namespace', async () => {
    const api = new ScriptedApi();
    let now = 0;
    const { watches, secrets } = watchesOver(api, () => now);
    watches.ensure('a');
    watches.ensure('b');
    await api.lists;
    await settled();
    await settled();
    expect(secrets.namespaces.sort()).to.deep.equal(['a', 'b']);
    now = IDLE_MS / 2;
    watches.ensure('b');
    now = IDLE_MS + 1;
    await secrets.sweep();
    expect(secrets.namespaces, 'a: idle since 0; b: kept at IDLE_MS/2').to.deep.equal(['b']);
    expect(watches.lookup('a', 'x'), 'a namespace no longer watched cannot tell').to.equal(undefined);
    expect(api.send.has('/api/v1/namespaces/a/secrets'), 'its watch ended').to.equal(false);
    expect(api.requests.filter((r) => r.includes('/api/v1/secrets'))).to.deep.equal([]);
    await secrets.stop();
    expect(secrets.namespaces).to.deep.equal([]);
  });

  it('shares the watches: a namespace rotation already watches costs Secret sync no second watch or rights check', async () => {
    const api = new ScriptedApi();
    const { watches, secrets } = watchesOver(api);
    secrets.ensure('a');
    await api.lists;
    await settled();
    watches.ensure('a');
    expect(api.requests).to.deep.equal([
      `LIST /api/v1/namespaces/a/secrets ${USED_SECRET_LABEL}=true`,
      'WATCH /api/v1/namespaces/a/secrets',
    ]);
    await secrets.stop();
  });

  it('remembers its own writes of managed Secrets at once', async () => {
    const api = new ScriptedApi();
    const { watches, secrets } = watchesOver(api);
    watches.ensure('a');
    await api.lists;
    await settled();
    watches.remember(managed('a', 'new', '12'));
    expect(watches.lookup('a', 'new')?.secret?.metadata?.resourceVersion).to.equal('12');
    await secrets.stop();
  });

  it('without the right to list Secrets: one warning naming it, GETs meanwhile, asked again ten minutes later', async () => {
    const api = new ScriptedApi();
    api.refuse = true;
    let now = 0;
    const { watches, secrets, warnings } = watchesOver(api, () => now);
    watches.ensure('a');
    await settled();
    watches.ensure('b');
    await settled();
    expect(watches.lookup('a', 's')).to.equal(undefined);
    expect(api.requests).to.have.length(1);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/^Secret sync reads each synced Secret with a GET every re-sync round/);
    expect(warnings[0]).to.include(
      'lacks: list secrets; granted by ClusterRole secretprovidersyncing-role in deploy/rbac-secret-sync.yaml',
    );
    api.refuse = false;
    now = REFUSED_RETRY_MS;
    watches.ensure('a');
    await api.lists;
    await settled();
    expect(watches.lookup('a', 's')).to.deep.equal({ secret: undefined });
    await secrets.stop();
  });
});
