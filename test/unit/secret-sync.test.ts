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
  async replace<T>(path: string, body: unknown): Promise<T> {
    await this.turn();
    this.writes.push(`PUT ${path}`);
    this.stored.set(path, body as Secret);
    return body as T;
  }
}

describe('SecretSyncer: one Secret shared by volumes that rotate together', () => {

  const object: SecretObject = { secretName: 'shared', type: 'Opaque', labels: {}, annotations: {}, data: [{ objectName: 'token', key: 'token' }] };
  const path = '/api/v1/namespaces/ns/secrets/shared';
  const pod = (i: number) => ({ name: `p${i}`, namespace: 'ns', uid: `u${i}`, serviceAccountName: 'default' });

  /** Four volumes' mounted files, all holding `content`. */
  const targets = (content: string) => { files = new Map([['token', Buffer.from(content)]]); return ['a', 'b', 'c', 'd'].map((n) => `/target/${n}`); };
  let files = new Map<string, Buffer>();

  function syncerOver(api: ScriptedSecrets): { syncer: SecretSyncer; events: string[] } {
    const events: string[] = [];
    const recorder: EventRecorder = { event: async (p, _type, reason) => { events.push(`${p.name}: ${reason}`); } };
    return { syncer: new SecretSyncer(api, recorder, createLogger({ component: 'test', silent: true }), async () => undefined, async () => files), events };
  }

  it('writes the Secret once: syncs of the same data wait for the one in flight instead of writing it again', async () => {
    const api = new ScriptedSecrets(new Map([[path, { metadata: { name: 'shared', namespace: 'ns', labels: { [MANAGED_LABEL]: 'true' } }, type: 'Opaque', data: { token: Buffer.from('v1').toString('base64') } }]]));
    const { syncer, events } = syncerOver(api);
    const outcomes = await Promise.all(targets('v2').map((t, i) => syncer.sync(pod(i), t, object, [])));
    expect(outcomes).to.deep.equal(['updated', 'unchanged', 'unchanged', 'unchanged']);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(api.reads).to.equal(1);
    expect(Buffer.from(api.stored.get(path)?.data?.['token'] ?? '', 'base64').toString()).to.equal('v2');
    expect(events).to.deep.equal([]);
    // A later sync reads the Secret again (a hand edit is undone).
    const reads = api.reads;
    expect(await syncer.sync(pod(0), '/target/a', object, [])).to.equal('unchanged');
    expect(api.reads).to.equal(reads + 1);
  });

  it('reports a Secret it does not manage on every pod that wants it', async () => {
    const api = new ScriptedSecrets(new Map([[path, { metadata: { name: 'shared', namespace: 'ns' }, type: 'Opaque', data: {} }]]));
    const { syncer, events } = syncerOver(api);
    const outcomes = await Promise.all(targets('v3').map((t, i) => syncer.sync(pod(i), t, object, [])));
    expect(outcomes).to.deep.equal(['conflict', 'conflict', 'conflict', 'conflict']);
    expect(events.sort()).to.deep.equal(['p0: SecretOwnershipConflict', 'p1: SecretOwnershipConflict', 'p2: SecretOwnershipConflict', 'p3: SecretOwnershipConflict']);
    expect(api.writes).to.deep.equal([]);
  });
});
