import { expect } from 'chai';
import type { Secret } from '../../driver/k8s/client/types.js';
import { MANAGED_LABEL } from '../../driver/k8s/constants.js';
import type { EventRecorder } from '../../driver/k8s/event-recorder.js';
import { SecretSyncer, type SecretApi } from '../../driver/k8s/secret-sync.js';
import type { SecretObject } from '../../driver/spc/secret-provider-class.js';
import { createLogger } from '../../proto/runtime/logger.js';

// The API is scripted here (a port): each call yields to the event loop, as a real one
// would, so concurrent syncs interleave. Secret sync against the real kube-apiserver is
// covered by test/integration/kubernetes-publish.test.ts and kubernetes-rotation.test.ts.

class ScriptedSecrets implements SecretApi {
  readonly writes: string[] = [];
  reads = 0;
  constructor(readonly stored: Map<string, Secret>) {}
  private async turn(): Promise<void> { await new Promise((r) => setImmediate(r)); }
  async get<T>(path: string): Promise<T> {
    await this.turn();
    this.reads++;
    const s = this.stored.get(path);
    if (!s) throw Object.assign(new Error('not found'), { code: 404, body: '{}' });
    return structuredClone(s) as T;
  }
  async create<T>(path: string, body: unknown): Promise<T> {
    await this.turn();
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
    if (current !== undefined && sent !== current) throw Object.assign(new Error('conflict'), { code: 409, body: '{"message":"the object has been modified"}' });
    this.writes.push(`PUT ${path}`);
    const next = structuredClone(body as Secret);
    next.metadata = { ...next.metadata, resourceVersion: String(Number(current ?? 0) + 1) };
    this.stored.set(path, next);
    return next as T;
  }
}

describe('SecretSyncer: one Secret shared by volumes that rotate together', () => {

  const object: SecretObject = { secretName: 'shared', type: 'Opaque', labels: {}, annotations: {}, data: [{ objectName: 'token', key: 'token' }] };
  const path = '/api/v1/namespaces/ns/secrets/shared';
  const pod = (i: number) => ({ name: `p${i}`, namespace: 'ns', uid: `u${i}`, serviceAccountName: 'default' });

  /** Mounted files per target path (the syncer's file reader, injected). */
  let mounted = new Map<string, string>();
  /** Four volumes' targets, all holding `content`. */
  const targets = (content: string) => { const paths = ['a', 'b', 'c', 'd'].map((n) => `/target/${n}`); for (const p of paths) mounted.set(p, content); return paths; };

  function syncerOver(api: ScriptedSecrets): { syncer: SecretSyncer; events: string[] } {
    const events: string[] = [];
    const recorder: EventRecorder = { event: async (p, _type, reason) => { events.push(`${p.name}: ${reason}`); } };
    const readFiles = async (target: string) => new Map([['token', Buffer.from(mounted.get(target) ?? '')]]);
    return { syncer: new SecretSyncer(api, recorder, createLogger({ component: 'test', silent: true }), async () => undefined, readFiles), events };
  }
  const managed = (token: string, type = 'Opaque'): Secret => ({ metadata: { name: 'shared', namespace: 'ns', labels: { [MANAGED_LABEL]: 'true' } }, type, data: { token: Buffer.from(token).toString('base64') } });
  const stored = (api: ScriptedSecrets) => Buffer.from(api.stored.get(path)?.data?.['token'] ?? '', 'base64').toString();
  beforeEach(() => { mounted = new Map(); });

  it('writes the Secret once: syncs wanting what the one before them just wrote make no API call', async () => {
    const api = new ScriptedSecrets(new Map([[path, managed('v1')]]));
    const { syncer, events } = syncerOver(api);
    const outcomes = await Promise.all(targets('v2').map((t, i) => syncer.sync(pod(i), t, object, [])));
    expect(outcomes).to.deep.equal(['updated', 'unchanged', 'unchanged', 'unchanged']);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(api.reads).to.equal(1);
    expect(stored(api)).to.equal('v2');
    expect(events).to.deep.equal([]);
    // A later sync reads the Secret again (a hand edit is undone).
    expect(await syncer.sync(pod(0), '/target/a', object, [])).to.equal('unchanged');
    expect(api.reads).to.equal(2);
  });

  it('runs syncs of different data in arrival order: the newer data is what stays', async () => {
    const api = new ScriptedSecrets(new Map([[path, { ...managed('v0'), metadata: { ...managed('v0').metadata, resourceVersion: '1' } }]]));
    api.putDelays.push(5); // the older data's write is slow: the newer must still land last
    const { syncer } = syncerOver(api);
    mounted.set('/target/old', 'v1');
    mounted.set('/target/new', 'v2');
    const outcomes = await Promise.all([syncer.sync(pod(0), '/target/old', object, []), syncer.sync(pod(1), '/target/new', object, [])]);
    expect(outcomes).to.deep.equal(['updated', 'updated']);
    expect(stored(api)).to.equal('v2');
  });

  it('never merges syncs that want another type or other labels for the same data', async () => {
    const api = new ScriptedSecrets(new Map([[path, managed('v2')]]));
    const { syncer, events } = syncerOver(api);
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
    expect(events).to.deep.equal([]);
  });

  it('shares a lasting failure with the syncs that waited for it, each reported on its own pod, without calling the API again', async () => {
    const api = new ScriptedSecrets(new Map());
    api.get = async () => { api.reads++; throw Object.assign(new Error('forbidden'), { code: 403, body: '{"message":"secrets is forbidden"}' }); };
    const { syncer, events } = syncerOver(api);
    const results = await Promise.all(targets('v2').map((t, i) => syncer.sync(pod(i), t, object, []).catch((e: Error) => e.message)));
    expect(new Set(results).size).to.equal(1);
    expect(results[0]).to.match(/HTTP 403 secrets is forbidden/);
    expect(api.reads).to.equal(1);
    expect(events).to.deep.equal(['p0: FailedToCreateSecret', 'p1: FailedToCreateSecret', 'p2: FailedToCreateSecret', 'p3: FailedToCreateSecret']);
  });

  it('reports a Secret it does not manage on every pod that wants it', async () => {
    const api = new ScriptedSecrets(new Map([[path, { metadata: { name: 'shared', namespace: 'ns' }, type: 'Opaque', data: {} }]]));
    const { syncer, events } = syncerOver(api);
    const outcomes = await Promise.all(targets('v3').map((t, i) => syncer.sync(pod(i), t, object, [])));
    expect(outcomes).to.deep.equal(['conflict', 'conflict', 'conflict', 'conflict']);
    expect(events).to.deep.equal(['p0: SecretOwnershipConflict', 'p1: SecretOwnershipConflict', 'p2: SecretOwnershipConflict', 'p3: SecretOwnershipConflict']);
    expect(api.writes).to.deep.equal([]);
  });
});
