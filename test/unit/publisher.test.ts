import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirMounter } from '../../driver/volume/mounter.js';
import { VolumePublisher, type PublishedVolume } from '../../driver/volume/publisher.js';
import { TargetLocks } from '../../driver/volume/target-locks.js';
import { createLogger } from '../../proto/runtime/logger.js';

const pod = { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: 'default' };
const spc = { namespace: 'n', name: 's', provider: 'fake', parameters: {}, secretObjects: [], annotations: {} };

/** A publisher over a plain directory (DirMounter) with an in-memory provider and class source. */
function publisherWith(hooks: ((v: PublishedVolume) => Promise<void>)[]) {
  let calls = 0;
  let contents = 'v1';
  const publisher = new VolumePublisher({
    locks: new TargetLocks(), mounter: new DirMounter(), logger: createLogger({ component: 'test', silent: true }), now: () => new Date(),
    classes: { get: async () => spc },
    providers: { mount: async () => { calls++; return { files: [{ path: 'a', mode: 0o644, contents: Buffer.from(contents) }], object_version: [{ id: 'a', version: contents }], error: null }; } },
    hooks,
  });
  return { publisher, calls: () => calls, set: (c: string) => { contents = c; } };
}

describe('VolumePublisher', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'ssc-pub-')); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });
  const req = (name: string) => ({ volumeId: 'v', targetPath: join(dir, name), spcName: 's', pod, volumeContext: {}, secrets: {} });

  it('never mounts for rotation: a target that is gone is skipped, not published again', async () => {
    const p = publisherWith([]);
    const result = await p.publisher.publish(req('gone'), {}, 'rotation');
    expect(result.skipped).to.equal(true);
    expect(p.calls()).to.equal(0);
    expect(await new DirMounter().isMounted(join(dir, 'gone'))).to.equal(false);
  });

  it('reports content as changed to the hooks again until a hook that failed succeeds', async () => {
    let fail = false;
    const seen: boolean[] = [];
    const p = publisherWith([async (v) => { seen.push(v.changed); if (fail) throw new Error('API down'); }]);
    await p.publisher.publish(req('owed'));
    fail = true;
    p.set('v2');
    await p.publisher.publish(req('owed'), {}, 'rotation').catch(() => undefined);
    fail = false;
    await p.publisher.publish(req('owed'), {}, 'rotation');
    await p.publisher.publish(req('owed'), {}, 'rotation');
    expect(seen).to.deep.equal([true, true, true, false]);
  });
});
