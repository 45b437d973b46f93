import { expect } from 'chai';
import type { Query } from '../../../../driver/k8s/client/kube-api.js';
import type { KubeList, KubeObject, WatchEvent } from '../../../../driver/k8s/client/types.js';
import { NamespacedWatches } from '../../../../driver/k8s/namespaced-watches.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const obj = (namespace: string, name: string, resourceVersion = '1'): KubeObject => ({
  metadata: { namespace, name, resourceVersion },
});

/** A scripted list+watch API: objects per namespace; every request recorded. */
class ScriptedApi {
  readonly requests: string[] = [];
  readonly stored = new Map<string, KubeObject[]>();
  readonly send = new Map<string, (event: WatchEvent<KubeObject>) => void>();
  private listedCount = 0;
  private waiters: (() => void)[] = [];

  async get<T>(path: string, query?: Query): Promise<T> {
    this.requests.push(`LIST ${path} ${String(query?.['labelSelector'])}`);
    const namespace = path.split('/')[5] ?? '';
    const list: KubeList<KubeObject> = { metadata: { resourceVersion: '10' }, items: this.stored.get(namespace) ?? [] };
    setImmediate(() => {
      this.listedCount++;
      for (const w of this.waiters.splice(0)) w();
    });
    return list as T;
  }

  watch(path: string, _q: Query, onEvent: (e: WatchEvent<KubeObject>) => void, signal: AbortSignal): Promise<void> {
    this.requests.push(`WATCH ${path}`);
    this.send.set(path, onEvent);
    return new Promise((_resolve, reject) =>
      signal.addEventListener('abort', () => {
        this.send.delete(path);
        reject(signal.reason as Error);
      }),
    );
  }

  /** Resolves once `n` lists have been answered in all. */
  async listed(n: number): Promise<void> {
    while (this.listedCount < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const PATH = (ns: string) => `/apis/example.io/v1/namespaces/${ns}/things`;

function watchesOver(api: ScriptedApi, options: { idleMs?: number; now?: () => number } = {}) {
  const logger = createLogger({ component: 'test', silent: true });
  return new NamespacedWatches<KubeObject>(
    api as never,
    (ns) => {
      if (ns === 'Bad') throw new Error('invalid namespace "Bad"');
      return { what: `thing (${ns})`, path: PATH(ns), labelSelector: 'x=y' };
    },
    logger,
    async () => undefined,
    options,
  );
}

describe('NamespacedWatches: one list+watch per namespace in use, none of the cluster', () => {
  it('cannot tell before a namespace is listed; then answers from its watch: present, absent, deleted', async () => {
    const api = new ScriptedApi();
    api.stored.set('a', [obj('a', 'one')]);
    const watches = watchesOver(api);
    expect(watches.lookup('a', 'one'), 'not watched').to.equal(undefined);
    watches.ensure('a');
    watches.ensure('a');
    await api.listed(1);
    expect(watches.lookup('a', 'one')?.object?.metadata?.name).to.equal('one');
    expect(watches.lookup('a', 'two')).to.deep.equal({ object: undefined });
    expect(watches.lookup('b', 'one'), 'another namespace is not watched').to.equal(undefined);
    api.send.get(PATH('a'))?.({ type: 'DELETED', object: obj('a', 'one', '11') });
    expect(watches.lookup('a', 'one')).to.deep.equal({ object: undefined });
    expect(api.requests).to.deep.equal([`LIST ${PATH('a')} x=y`, `WATCH ${PATH('a')}`]);
    await watches.stop();
    expect(api.send.size).to.equal(0);
  });

  it("tells change and delete listeners of every watched namespace's events", async () => {
    const api = new ScriptedApi();
    api.stored.set('b', [obj('b', 'listed')]);
    const watches = watchesOver(api);
    const seen: string[] = [];
    watches.onChange((o) => seen.push(`change ${o.metadata?.namespace}/${o.metadata?.name}`));
    watches.onDelete((o) => seen.push(`delete ${o.metadata?.namespace}/${o.metadata?.name}`));
    watches.ensure('a');
    watches.ensure('b');
    await api.listed(2);
    api.send.get(PATH('a'))?.({ type: 'ADDED', object: obj('a', 'x', '12') });
    api.send.get(PATH('b'))?.({ type: 'DELETED', object: obj('b', 'listed', '13') });
    expect(seen).to.deep.equal(['change b/listed', 'change a/x', 'delete b/listed']);
    await watches.stop();
  });

  it('after stop, a late ensure starts nothing (no watch, no sweep timer)', async () => {
    const api = new ScriptedApi();
    const watches = watchesOver(api, { idleMs: 60_000 });
    watches.ensure('a');
    await api.listed(1);
    await watches.stop();
    watches.ensure('b');
    expect([watches.namespaces, watches.watching('b'), api.send.has(PATH('b'))]).to.deep.equal([[], false, false]);
  });

  it('stops a namespace no one looked up for idleMs; a lookup there starts it again', async () => {
    const api = new ScriptedApi();
    let now = 0;
    const watches = watchesOver(api, { idleMs: 60_000, now: () => now });
    watches.ensure('a');
    watches.ensure('b');
    await api.listed(2);
    now = 50_000;
    watches.ensure('b');
    now = 60_000;
    await watches.sweep();
    expect(watches.namespaces).to.deep.equal(['b']);
    now = 109_999;
    await watches.sweep();
    expect(watches.namespaces).to.deep.equal(['b']);
    now = 110_000;
    await watches.sweep();
    expect(watches.namespaces).to.deep.equal([]);
    expect(watches.everSynced, 'nothing watched: nothing to wait for').to.equal(true);
    watches.ensure('a');
    expect(watches.everSynced, 'a new watch has not listed yet').to.equal(false);
    await api.listed(3);
    expect(watches.everSynced).to.equal(true);
    await watches.stop();
  });

  it('an invalid namespace throws and leaves nothing behind', async () => {
    const api = new ScriptedApi();
    const watches = watchesOver(api, { idleMs: 1000 });
    expect(() => watches.ensure('Bad')).to.throw('invalid namespace "Bad"');
    expect(watches.namespaces).to.deep.equal([]);
    expect(api.requests).to.deep.equal([]);
    await watches.stop();
  });
});
