import { expect } from 'chai';
import type { OwnerReference, Secret } from '../../../../driver/k8s/client/types.js';
import { MANAGED_LABEL, USED_SECRET_LABEL } from '../../../../driver/k8s/constants.js';
import { SecretSyncer, SYNCED_SECRET_LABELS, type SecretApi } from '../../../../driver/secret-sync/secret-sync.js';
import type { CachedSecret, SecretCache } from '../../../../driver/secret-sync/managed-secret-watches.js';
import type { SecretObject } from '../../../../driver/spc/secret-provider-class.js';
import { createLogger } from '../../../../lib/logging/logger.js';

// The API is scripted here (a port): each call yields to the event loop, as a real one
// would, so concurrent syncs interleave. Secret sync against the real kube-apiserver is
// covered by test/integration/kubernetes-publish.test.ts and kubernetes-rotation.test.ts.

class ScriptedSecrets implements SecretApi {
  readonly writes: string[] = [];
  reads = 0;
  constructor(readonly stored: Map<string, Secret>) {}
  private async turn(): Promise<void> {
    await new Promise((r) => setImmediate(r));
  }
  async get<T>(path: string): Promise<T> {
    await this.turn();
    this.reads++;
    const s = this.stored.get(path);
    if (!s) throw Object.assign(new Error('not found'), { code: 404, body: '{}' });
    return structuredClone(s) as T;
  }
  async create<T>(path: string, body: unknown): Promise<T> {
    await this.turn();
    if (this.stored.has(`${path}/${(body as Secret).metadata?.name}`))
      throw Object.assign(new Error('exists'), { code: 409, body: '{"reason":"AlreadyExists"}' });
    this.writes.push(`POST ${path}`);
    this.stored.set(`${path}/${(body as Secret).metadata?.name}`, body as Secret);
    return body as T;
  }
  /** Extra event-loop turns before each successive PUT is applied (a slow write). */
  readonly putDelays: number[] = [];
  async replace<T>(path: string, body: unknown): Promise<T> {
    for (let i = this.putDelays.shift() ?? 0; i >= 0; i--) await this.turn();
    // Optimistic concurrency, as the API server does it: a stale resourceVersion is a 409.
    const current = this.stored.get(path)?.metadata?.resourceVersion;
    const sent = (body as Secret).metadata?.resourceVersion;
    if (current !== undefined && sent !== current)
      throw Object.assign(new Error('conflict'), { code: 409, body: '{"message":"the object has been modified"}' });
    this.writes.push(`PUT ${path}`);
    const next = structuredClone(body as Secret);
    next.metadata = { ...next.metadata, resourceVersion: String(Number(current ?? 0) + 1) };
    this.stored.set(path, next);
    return next as T;
  }
  /** Extra event-loop turns before each successive PATCH is applied. */
  readonly patchDelays: number[] = [];
  /** The JSON patch ops the driver sends: a resourceVersion precondition, an ownerReferences list, the labels. */
  /** HTTP status to refuse each successive PATCH with (undefined: apply it). */
  readonly patchRefusals: (number | undefined)[] = [];
  async patch<T>(path: string, ops: readonly object[]): Promise<T> {
    for (let i = this.patchDelays.shift() ?? 0; i >= 0; i--) await this.turn();
    const refusal = this.patchRefusals.shift();
    if (refusal !== undefined)
      throw Object.assign(new Error('refused'), { code: refusal, body: '{"message":"patch refused by policy"}' });
    const current = this.stored.get(path);
    if (!current) throw Object.assign(new Error('not found'), { code: 404, body: '{}' });
    const next = structuredClone(current);
    for (const op of ops as { op: string; path: string; value: unknown }[]) {
      if (op.path === '/metadata/resourceVersion') {
        // As the API server does: a patched resourceVersion other than the stored one is a 409.
        if (op.value !== (current.metadata?.resourceVersion ?? ''))
          throw Object.assign(new Error('conflict'), { code: 409, body: '{"message":"the object has been modified"}' });
      } else if (op.path === '/metadata/ownerReferences') {
        next.metadata = { ...next.metadata, ownerReferences: op.value as OwnerReference[] };
      } else if (op.path === '/metadata/labels') {
        next.metadata = { ...next.metadata, labels: op.value as Record<string, string> };
      } else throw new Error(`unexpected patch op ${op.op} ${op.path}`);
    }
    this.writes.push(`PATCH ${path}`);
    next.metadata = { ...next.metadata, resourceVersion: String(Number(current.metadata?.resourceVersion ?? 0) + 1) };
    this.stored.set(path, next);
    return next as T;
  }
}

describe('SecretSyncer: one Secret shared by volumes that rotate together', () => {
  const object: SecretObject = {
    secretName: 'shared',
    type: 'Opaque',
    labels: {},
    annotations: {},
    data: [{ objectName: 'token', key: 'token' }],
  };
  const path = '/api/v1/namespaces/ns/secrets/shared';
  const pod = (i: number) => ({ name: `p${i}`, namespace: 'ns', uid: `u${i}`, serviceAccountName: 'default' });

  /** Mounted files per target path (the syncer's file reader, injected). */
  let mounted = new Map<string, string>();
  /** Four volumes' targets, all holding `content`. */
  const targets = (content: string) => {
    const paths = ['a', 'b', 'c', 'd'].map((n) => `/target/${n}`);
    for (const p of paths) mounted.set(p, content);
    return paths;
  };

  function syncerOver(api: ScriptedSecrets): { syncer: SecretSyncer } {
    const readFiles = async (target: string) => new Map([['token', Buffer.from(mounted.get(target) ?? '')]]);
    return {
      syncer: new SecretSyncer(
        api,
        createLogger({ component: 'test', silent: true }),
        async () => undefined,
        readFiles,
      ),
    };
  }
  const managed = (token: string, type = 'Opaque'): Secret => ({
    metadata: { name: 'shared', namespace: 'ns', labels: { ...SYNCED_SECRET_LABELS } },
    type,
    data: { token: Buffer.from(token).toString('base64') },
  });
  const stored = (api: ScriptedSecrets) =>
    Buffer.from(api.stored.get(path)?.data?.['token'] ?? '', 'base64').toString();
  beforeEach(() => {
    mounted = new Map();
  });

  it('writes the Secret once: syncs wanting what the one before them just wrote make no API call', async () => {
    const api = new ScriptedSecrets(new Map([[path, managed('v1')]]));
    const { syncer } = syncerOver(api);
    const outcomes = await Promise.all(targets('v2').map((t, i) => syncer.sync(pod(i), t, object, [])));
    expect(outcomes).to.deep.equal(['updated', 'unchanged', 'unchanged', 'unchanged']);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(api.reads).to.equal(1);
    expect(stored(api)).to.equal('v2');
    // A later sync reads the Secret again (a hand edit is undone).
    expect(await syncer.sync(pod(0), '/target/a', object, [])).to.equal('unchanged');
    expect(api.reads).to.equal(2);
  });

  it('runs syncs of different data in arrival order: the newer data is what stays', async () => {
    const api = new ScriptedSecrets(
      new Map([[path, { ...managed('v0'), metadata: { ...managed('v0').metadata, resourceVersion: '1' } }]]),
    );
    api.putDelays.push(5); // the older data's write is slow: the newer must still land last
    const { syncer } = syncerOver(api);
    mounted.set('/target/old', 'v1');
    mounted.set('/target/new', 'v2');
    const outcomes = await Promise.all([
      syncer.sync(pod(0), '/target/old', object, []),
      syncer.sync(pod(1), '/target/new', object, []),
    ]);
    expect(outcomes).to.deep.equal(['updated', 'updated']);
    expect(stored(api)).to.equal('v2');
  });

  it('never merges syncs that want another type or other labels for the same data', async () => {
    const api = new ScriptedSecrets(new Map([[path, managed('v2')]]));
    const { syncer } = syncerOver(api);
    mounted.set('/target/a', 'v2');
    const basicAuth: SecretObject = { ...object, type: 'kubernetes.io/basic-auth' };
    const labelled: SecretObject = { ...object, labels: { team: 'a' } };
    const results = await Promise.all([
      syncer.sync(pod(0), '/target/a', object, []),
      syncer.sync(pod(1), '/target/a', basicAuth, []),
      syncer.sync(pod(2), '/target/a', labelled, []),
    ]);
    expect(results).to.deep.equal(['unchanged', 'unchanged', 'updated']);
    // Each read the Secret itself (the type is checked against it when an update is needed).
    expect(api.reads).to.equal(3);
    expect(api.stored.get(path)?.metadata?.labels).to.include({ team: 'a' });
  });

  it('shares a lasting failure with the syncs that waited for it (each caller gets it), without calling the API again', async () => {
    const api = new ScriptedSecrets(new Map());
    api.get = async () => {
      api.reads++;
      throw Object.assign(new Error('forbidden'), { code: 403, body: '{"message":"secrets is forbidden"}' });
    };
    const { syncer } = syncerOver(api);
    const results = await Promise.all(
      targets('v2').map((t, i) => syncer.sync(pod(i), t, object, []).catch((e: Error) => e.message)),
    );
    expect(new Set(results).size).to.equal(1);
    expect(results[0]).to.match(/HTTP 403 secrets is forbidden/);
    expect(api.reads).to.equal(1);
  });

  it('answers conflict for a Secret it does not manage, to every pod that wants it, and writes nothing', async () => {
    const api = new ScriptedSecrets(
      new Map([[path, { metadata: { name: 'shared', namespace: 'ns' }, type: 'Opaque', data: {} }]]),
    );
    const { syncer } = syncerOver(api);
    const outcomes = await Promise.all(targets('v3').map((t, i) => syncer.sync(pod(i), t, object, [owner('rs-a')])));
    expect(outcomes).to.deep.equal(['conflict', 'conflict', 'conflict', 'conflict']);
    expect(api.writes).to.deep.equal([]);
  });
});

const owner = (name: string): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name,
  uid: `uid-${name}`,
});

describe('SecretSyncer: owner references are merged, never replaced', () => {
  const object: SecretObject = {
    secretName: 'shared',
    type: 'Opaque',
    labels: {},
    annotations: {},
    data: [{ objectName: 'token', key: 'token' }],
  };
  const path = '/api/v1/namespaces/ns/secrets/shared';
  const pod = (i: number) => ({ name: `p${i}`, namespace: 'ns', uid: `u${i}`, serviceAccountName: 'default' });
  const syncer = (api: ScriptedSecrets) =>
    new SecretSyncer(
      api,
      createLogger({ component: 'test', silent: true }),
      async () => undefined,
      async () => new Map([['token', Buffer.from('v1')]]),
    );
  const owners = (api: ScriptedSecrets) => api.stored.get(path)?.metadata?.ownerReferences?.map((o) => o.name);

  it("creates with this pod's owners, adds another pod's owner with one conditional PATCH (no data write), keeps owners it did not set", async () => {
    const api = new ScriptedSecrets(new Map());
    expect(await syncer(api).sync(pod(0), '/t/a', object, [owner('rs-a')])).to.equal('created');
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({
      [MANAGED_LABEL]: 'true',
      [USED_SECRET_LABEL]: 'true',
    });
    api.stored.get(path)!.metadata!.resourceVersion = '7';
    api.stored
      .get(path)!
      .metadata!.ownerReferences!.push({ apiVersion: 'v1', kind: 'ConfigMap', name: 'keeper', uid: 'uid-keeper' });
    expect(await syncer(api).sync(pod(1), '/t/b', object, [owner('rs-b')])).to.equal('owned');
    expect(owners(api)).to.deep.equal(['rs-a', 'keeper', 'rs-b']);
    expect(api.writes).to.deep.equal([`POST /api/v1/namespaces/ns/secrets`, `PATCH ${path}`]);
    // Already an owner, data unchanged: nothing written.
    expect(await syncer(api).sync(pod(2), '/t/c', object, [owner('rs-b')])).to.equal('unchanged');
    expect(api.writes).to.have.length(2);
  });

  it('two nodes adding owners at once both end up present: the loser of the race gets 409, reads again and merges', async () => {
    const api = new ScriptedSecrets(
      new Map([
        [
          path,
          {
            metadata: {
              name: 'shared',
              namespace: 'ns',
              resourceVersion: '1',
              labels: { ...SYNCED_SECRET_LABELS },
              ownerReferences: [owner('rs-a')],
            },
            type: 'Opaque',
            data: { token: Buffer.from('v1').toString('base64') },
          },
        ],
      ]),
    );
    api.patchDelays.push(3, 0); // both read resourceVersion 1; the first patch lands late, after the second
    const results = await Promise.all([
      syncer(api).sync(pod(1), '/t/b', object, [owner('rs-b')]),
      syncer(api).sync(pod(2), '/t/c', object, [owner('rs-c')]),
    ]);
    expect(results).to.deep.equal(['owned', 'owned']);
    expect(owners(api)?.sort()).to.deep.equal(['rs-a', 'rs-b', 'rs-c']);
    expect(api.writes.filter((w) => w.startsWith('PATCH'))).to.have.length(2);
  });

  it('an update of the data carries the merged owners in the same write', async () => {
    const api = new ScriptedSecrets(
      new Map([
        [
          path,
          {
            metadata: {
              name: 'shared',
              namespace: 'ns',
              resourceVersion: '1',
              labels: { ...SYNCED_SECRET_LABELS },
              ownerReferences: [owner('rs-a')],
            },
            type: 'Opaque',
            data: { token: Buffer.from('v0').toString('base64') },
          },
        ],
      ]),
    );
    expect(await syncer(api).sync(pod(1), '/t/b', object, [owner('rs-b')])).to.equal('updated');
    expect(owners(api)).to.deep.equal(['rs-a', 'rs-b']);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
  });
});

describe('SecretSyncer reading through the watched managed Secrets', () => {
  const object: SecretObject = {
    secretName: 'app',
    type: 'Opaque',
    labels: {},
    annotations: {},
    data: [{ objectName: 'token', key: 'token' }],
  };
  const path = '/api/v1/namespaces/ns/secrets/app';
  const pod = { name: 'p', namespace: 'ns', uid: 'u', serviceAccountName: 'default' };
  const secret = (token: string, resourceVersion: string, managed = true): Secret => ({
    metadata: {
      name: 'app',
      namespace: 'ns',
      resourceVersion,
      labels: managed ? { ...SYNCED_SECRET_LABELS } : {},
    },
    type: 'Opaque',
    data: { token: Buffer.from(token).toString('base64') },
  });

  /** A cache holding `held` (undefined: it says the Secret is absent), recording what it is told. */
  class StubCache implements SecretCache {
    readonly ensured: string[] = [];
    readonly remembered: string[] = [];
    constructor(public held: Secret | undefined) {}
    lookup(): CachedSecret {
      return { secret: this.held && structuredClone(this.held) };
    }
    remember(s: Secret): void {
      this.remembered.push(s.metadata?.resourceVersion ?? '');
      this.held = s;
    }
    ensure(namespace: string): void {
      this.ensured.push(namespace);
    }
  }
  const syncer = (api: ScriptedSecrets, cache: SecretCache, token = 'v1') =>
    new SecretSyncer(
      api,
      createLogger({ component: 'test', silent: true }),
      async () => undefined,
      async () => new Map([['token', Buffer.from(token)]]),
      cache,
    );

  it('an unchanged Secret the watch holds: no request at all, and the namespace is watched', async () => {
    const api = new ScriptedSecrets(new Map([[path, secret('v1', '5')]]));
    const cache = new StubCache(secret('v1', '5'));
    expect(await syncer(api, cache).sync(pod, '/t', object, [])).to.equal('unchanged');
    expect([api.reads, api.writes]).to.deep.equal([0, []]);
    expect(cache.ensured).to.deep.equal(['ns']);
  });

  it('a Secret deleted (the watch says absent) is created, and the cache learns it at once', async () => {
    const api = new ScriptedSecrets(new Map());
    const cache = new StubCache(undefined);
    expect(await syncer(api, cache).sync(pod, '/t', object, [])).to.equal('created');
    expect([api.reads, api.writes]).to.deep.equal([0, ['POST /api/v1/namespaces/ns/secrets']]);
    expect(cache.held?.metadata?.name).to.equal('app');
  });

  it('a cache behind another writer: the 409 is retried with a GET, then written', async () => {
    const api = new ScriptedSecrets(new Map([[path, secret('v0', '7')]]));
    const cache = new StubCache(secret('old', '6'));
    expect(await syncer(api, cache, 'v2').sync(pod, '/t', object, [])).to.equal('updated');
    expect(api.reads).to.equal(1);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(cache.remembered).to.deep.equal(['8']);
  });

  // Synced before the driver labelled used=true (by upstream, or by an earlier version of this driver): only managed=true.
  const upstreamSynced = (token: string, labels: Record<string, string> = {}): Secret => ({
    ...secret(token, '4'),
    metadata: { ...secret(token, '4').metadata, labels: { ...labels, [MANAGED_LABEL]: 'true' } },
  });

  it('a Secret synced without used=true (the watch never sees it): the refused create is retried with a GET, then only the labels are patched', async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v1', { team: 'blue' })]]));
    const cache = new StubCache(undefined);
    expect(await syncer(api, cache).sync(pod, '/t', object, [])).to.equal('labelled');
    expect([api.reads, api.writes]).to.deep.equal([1, [`PATCH ${path}`]]);
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({ team: 'blue', ...SYNCED_SECRET_LABELS });
    expect(api.stored.get(path)?.metadata?.resourceVersion).to.equal('5');
    expect(cache.held?.metadata?.labels?.[USED_SECRET_LABEL], 'the cache learns it: the next round is free').to.equal(
      'true',
    );
    expect(await syncer(api, cache).sync(pod, '/t', object, [])).to.equal('unchanged');
    expect([api.reads, api.writes]).to.deep.equal([1, [`PATCH ${path}`]]);
  });

  it('a Secret synced without used=true whose data changed: one PUT carries the data and the label', async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v0')]]));
    expect(await syncer(api, new StubCache(undefined), 'v2').sync(pod, '/t', object, [])).to.equal('updated');
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({ ...SYNCED_SECRET_LABELS });
  });

  it("secretObjects labels naming the driver's own keys: an old Secret is still only labelled (no data write), then unchanged", async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v1', { app: 'web' })]]));
    const own = { ...object, labels: { [USED_SECRET_LABEL]: 'false', app: 'web' } };
    const cache = new StubCache(undefined);
    expect(await syncer(api, cache).sync(pod, '/t', own, [])).to.equal('labelled');
    expect(await syncer(api, cache).sync(pod, '/t', own, [])).to.equal('unchanged');
    expect(api.writes).to.deep.equal([`PATCH ${path}`]);
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({ app: 'web', ...SYNCED_SECRET_LABELS });
  });

  it('owners and the label both missing: one PATCH carries both, no data write', async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v1')]]));
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs-a', uid: 'uid-rs-a' };
    expect(await syncer(api, new StubCache(undefined)).sync(pod, '/t', object, [rs])).to.equal('owned');
    expect(api.writes).to.deep.equal([`PATCH ${path}`]);
    const stored = api.stored.get(path)?.metadata;
    expect([stored?.labels, stored?.ownerReferences?.map((o) => o.uid)]).to.deep.equal([
      { ...SYNCED_SECRET_LABELS },
      ['uid-rs-a'],
    ]);
  });

  it('two nodes labelling the same old Secret at once: one PATCH; the other gets 409, reads again, finds it done', async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v1')]]));
    api.patchDelays.push(0, 3);
    const results = await Promise.all([
      syncer(api, new StubCache(undefined)).sync(pod, '/t', object, []),
      syncer(api, new StubCache(undefined)).sync(pod, '/t', object, []),
    ]);
    expect(results.sort()).to.deep.equal(['labelled', 'unchanged']);
    expect(api.writes).to.deep.equal([`PATCH ${path}`]);
  });

  it('a label the API refuses for good (403): the Secret, whose data is current, counts as unchanged; one warning', async () => {
    const api = new ScriptedSecrets(new Map([[path, upstreamSynced('v1')]]));
    api.patchRefusals.push(403, 403, 503);
    const warnings: string[] = [];
    const logger = createLogger({ component: 'test', silent: true });
    logger.warn = ((message: string) => {
      warnings.push(message);
      return logger;
    }) as typeof logger.warn;
    const syncer = new SecretSyncer(
      api,
      logger,
      async () => undefined,
      async () => new Map([['token', Buffer.from('v1')]]),
      new StubCache(undefined),
    );
    expect(await syncer.sync(pod, '/t', object, [])).to.equal('unchanged');
    expect(await syncer.sync(pod, '/t', object, [])).to.equal('unchanged');
    expect(warnings).to.deep.equal([
      'Secret left without the used=true label: it is not in the watch, so each sync of it asks the API',
    ]);
    // A transient refusal (503) is retried like any other write: the next attempt labels it.
    expect(await syncer.sync(pod, '/t', object, [])).to.equal('labelled');
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({ ...SYNCED_SECRET_LABELS });
  });

  it("secretObjects labels cannot unset the driver's own: used and managed stay true", async () => {
    const api = new ScriptedSecrets(new Map());
    const own = { ...object, labels: { [USED_SECRET_LABEL]: 'false', [MANAGED_LABEL]: 'false', app: 'web' } };
    expect(await syncer(api, new StubCache(undefined)).sync(pod, '/t', own, [])).to.equal('created');
    expect(api.stored.get(path)?.metadata?.labels).to.deep.equal({ app: 'web', ...SYNCED_SECRET_LABELS });
  });

  it('a Secret of that name that is not ours (the watch never sees it): the refused create is retried with a GET, a conflict', async () => {
    const api = new ScriptedSecrets(new Map([[path, secret('theirs', '3', false)]]));
    expect(await syncer(api, new StubCache(undefined)).sync(pod, '/t', object, [])).to.equal('conflict');
    expect([api.reads, api.writes]).to.deep.equal([1, []]);
  });
});
