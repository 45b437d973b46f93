import { expect } from 'chai';
import { KubeApiError, type Query } from '../../../../driver/k8s/client/kube-api.js';
import type { KubeList, KubeObject, WatchEvent } from '../../../../driver/k8s/client/types.js';
import { WatchedCache, type ListWatchApi } from '../../../../driver/k8s/watched-cache.js';
import { createLogger } from '../../../../lib/logging/logger.js';

// The API side is scripted here (a port, no sockets): the real kube-apiserver behaviour
// is covered by test/integration/kube-api.test.ts and the Kubernetes-mode tests.

type WatchStep = (emit: (event: WatchEvent) => void) => Promise<void>;

const obj = (name: string, resourceVersion: string, extra: Record<string, unknown> = {}): KubeObject => ({
  metadata: { name, namespace: 'ns', resourceVersion, managedFields: [{ manager: 'kubectl' }] },
  ...extra,
});
const list = (resourceVersion: string, items: KubeObject[], next?: string): KubeList<KubeObject> => ({
  metadata: { resourceVersion, ...(next ? { continue: next } : {}) },
  items,
});

/** Answers lists and watches from scripts; once the watch script is used up, a watch waits for stop(). */
class ScriptedApi implements ListWatchApi {
  readonly listQueries: (Query | undefined)[] = [];
  readonly watchQueries: Query[] = [];
  private parkedResolve: (() => void) | undefined;
  parked = new Promise<void>((resolve) => {
    this.parkedResolve = resolve;
  });

  constructor(
    private readonly lists: (KubeList<KubeObject> | Error)[],
    private readonly watches: WatchStep[],
  ) {}

  async get<T>(_path: string, query?: Query): Promise<T> {
    this.listQueries.push(query);
    const next = this.lists.shift();
    if (next === undefined) throw new Error('no more lists scripted');
    if (next instanceof Error) throw next;
    return next as T;
  }

  watch(_path: string, query: Query, onEvent: (event: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    this.watchQueries.push(query);
    const step = this.watches.shift();
    if (step) return step(onEvent);
    this.parkedResolve?.();
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
  }
}

function cacheOver(api: ScriptedApi): { cache: WatchedCache<KubeObject>; sleeps: number[]; changes: string[] } {
  const sleeps: number[] = [];
  const changes: string[] = [];
  const cache = new WatchedCache<KubeObject>(
    api,
    { what: 'Thing', path: '/api/v1/things', labelSelector: 'a=b' },
    createLogger({ component: 'test', silent: true }),
    async (ms) => {
      sleeps.push(ms);
    },
  );
  cache.onChange((o) => changes.push(`${o.metadata?.name}@${o.metadata?.resourceVersion}`));
  return { cache, sleeps, changes };
}

describe('WatchedCache: list, then watch, and stay alive', () => {
  it('lists in pages, then applies watch events, re-watching from the last resourceVersion seen', async () => {
    const api = new ScriptedApi(
      [list('', [obj('a', '1')], 'page2'), list('10', [obj('b', '2')])],
      [
        async (emit) => {
          emit({ type: 'ADDED', object: obj('c', '11') });
          emit({ type: 'MODIFIED', object: obj('a', '12') });
          emit({ type: 'DELETED', object: obj('b', '13') });
          emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
        },
      ],
    );
    const { cache, changes } = cacheOver(api);
    cache.start();
    await api.parked;
    expect(api.listQueries).to.deep.equal([
      { labelSelector: 'a=b', fieldSelector: undefined, limit: 500, continue: undefined },
      { labelSelector: 'a=b', fieldSelector: undefined, limit: 500, continue: 'page2' },
    ]);
    expect(api.watchQueries.map((q) => q['resourceVersion'])).to.deep.equal(['10', '20']);
    expect(api.watchQueries[0]).to.include({ labelSelector: 'a=b', allowWatchBookmarks: true });
    expect(api.watchQueries[0]?.['timeoutSeconds']).to.be.within(300, 599);
    expect(cache.get('a', 'ns')?.metadata?.resourceVersion).to.equal('12');
    expect(cache.get('b', 'ns')).to.equal(undefined);
    expect(cache.get('c', 'ns')?.metadata).to.not.have.property('managedFields');
    expect(changes).to.deep.equal(['a@1', 'b@2', 'c@11', 'a@12']);
    expect(cache.everSynced).to.equal(true);
    await cache.stop();
  });

  it("relists at once when the watch's resourceVersion expired (410 as an event or as the answer)", async () => {
    const api = new ScriptedApi(
      [list('5', [obj('a', '1')]), list('8', [obj('a', '1'), obj('b', '7')]), list('9', [obj('b', '7')])],
      [
        async (emit) => {
          emit({
            type: 'ERROR',
            object: { kind: 'Status', code: 410, message: 'too old resource version' } as KubeObject,
          });
        },
        async () => {
          throw new KubeApiError(410, '{}', 'GET', '/api/v1/things');
        },
      ],
    );
    const { cache, sleeps, changes } = cacheOver(api);
    cache.start();
    await api.parked;
    expect(sleeps).to.deep.equal([]);
    expect(api.watchQueries.map((q) => q['resourceVersion'])).to.deep.equal(['5', '8', '9']);
    // A relist reports only what is new or changed, and drops what is gone.
    expect(changes).to.deep.equal(['a@1', 'b@7']);
    expect(cache.get('a', 'ns')).to.equal(undefined);
    await cache.stop();
  });

  it('waits 5 s and relists after a failed list or watch; stays synced once it ever was', async () => {
    const api = new ScriptedApi(
      [
        new KubeApiError(403, '{"message":"forbidden"}', 'GET', '/api/v1/things'),
        list('3', [obj('a', '1')]),
        list('4', [obj('a', '1')]),
      ],
      [
        async (emit) => {
          emit({ type: 'ERROR', object: { kind: 'Status', code: 500, message: 'internal error' } as KubeObject });
        },
      ],
    );
    const { cache, sleeps } = cacheOver(api);
    expect(cache.everSynced).to.equal(false);
    cache.start();
    await api.parked;
    expect(sleeps).to.deep.equal([5000, 5000]);
    expect(api.listQueries).to.have.length(3);
    expect(cache.everSynced).to.equal(true);
    await cache.stop();
  });

  it('pauses before re-watching when the server ends a watch at once', async () => {
    const api = new ScriptedApi([list('3', [])], [async () => undefined]);
    const { cache, sleeps } = cacheOver(api);
    cache.start();
    await api.parked;
    expect(sleeps).to.deep.equal([1000]);
    await cache.stop();
  });

  it('remembers an object this process just wrote until its watch event comes, unless the watch has a later version', async () => {
    const api = new ScriptedApi([list('3', [obj('a', '2'), obj('c', '9')])], []);
    const { cache } = cacheOver(api);
    cache.start();
    await api.parked;
    cache.remember(obj('b', '4'));
    cache.remember(obj('a', '10')); // a write after what the watch had: replaces it
    cache.remember(obj('c', '8')); // older than what the watch had: kept out
    expect(
      cache
        .values()
        .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
        .sort(),
    ).to.deep.equal(['a@10', 'b@4', 'c@9']);
    expect(cache.get('b', 'ns')?.metadata).to.not.have.property('managedFields');
    await cache.stop();
  });

  it('keeps watching when a change listener throws', async () => {
    const api = new ScriptedApi(
      [list('3', [])],
      [
        async (emit) => {
          emit({ type: 'ADDED', object: obj('a', '4') });
          emit({ type: 'ADDED', object: obj('b', '5') });
        },
      ],
    );
    const { cache } = cacheOver(api);
    cache.onChange(() => {
      throw new Error('listener bug');
    });
    cache.start();
    await api.parked;
    expect(cache.get('b', 'ns')).to.not.equal(undefined);
    expect(api.listQueries).to.have.length(1);
    await cache.stop();
  });
});
