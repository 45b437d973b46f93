import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  constructor(readonly stored: Map<string, Secret>) {}
  private async turn(): Promise<void> { await new Promise((r) => setImmediate(r)); }
  async get<T>(path: string): Promise<T> {
    await this.turn();
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
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'ssc-sync-')); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  it('writes the Secret once; the other syncs find it up to date', async () => {
    const targets = ['a', 'b', 'c', 'd'].map((n) => join(dir, n));
    for (const t of targets) { await rm(t, { recursive: true, force: true }); await (await import('node:fs/promises')).mkdir(t); await writeFile(join(t, 'token'), 'v2'); }
    const path = '/api/v1/namespaces/ns/secrets/shared';
    const api = new ScriptedSecrets(new Map([[path, { metadata: { name: 'shared', namespace: 'ns', labels: { [MANAGED_LABEL]: 'true' } }, type: 'Opaque', data: { token: Buffer.from('v1').toString('base64') } }]]));
    const events: string[] = [];
    const recorder: EventRecorder = { event: async (_pod, _type, reason) => { events.push(reason); } };
    const syncer = new SecretSyncer(api, recorder, createLogger({ component: 'test', silent: true }), async () => undefined);
    const object: SecretObject = { secretName: 'shared', type: 'Opaque', labels: {}, annotations: {}, data: [{ objectName: 'token', key: 'token' }] };
    const outcomes = await Promise.all(targets.map((t, i) => syncer.sync({ name: `p${i}`, namespace: 'ns', uid: `u${i}`, serviceAccountName: 'default' }, t, object, [])));
    expect(outcomes).to.deep.equal(['updated', 'unchanged', 'unchanged', 'unchanged']);
    expect(api.writes).to.deep.equal([`PUT ${path}`]);
    expect(Buffer.from(api.stored.get(path)?.data?.['token'] ?? '', 'base64').toString()).to.equal('v2');
    expect(events).to.deep.equal([]);
  });
});
