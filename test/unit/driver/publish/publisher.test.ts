import { expect } from 'chai';
import { mkdtemp, readFile, readlink, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirMounter } from '../../../../driver/mount/mounter.js';
import { TargetLifecycle } from '../../../../driver/mount/target-lifecycle.js';
import { PublishError, type PublishedVolume } from '../../../../driver/publish/publisher.js';
import { dirPublisher, oneFileAnswer, publishRequest } from '../../../support/dir-publisher.js';

/** A publisher over a plain directory whose provider answers file `a` with the contents `set` last gave. */
function publisherWith(hooks: ((v: PublishedVolume) => Promise<void>)[]) {
  let calls = 0;
  let contents = 'v1';
  const sentVersions: string[][] = [];
  const targets = new TargetLifecycle();
  const publisher = dirPublisher({
    targets,
    providers: {
      mount: async (_provider, request) => {
        calls++;
        sentVersions.push((request.current_object_version ?? []).map((v) => `${v.id}=${v.version}`));
        return oneFileAnswer(contents, contents);
      },
    },
    hooks,
  });
  return {
    publisher,
    targets,
    calls: () => calls,
    set: (c: string) => {
      contents = c;
    },
    sentVersions,
  };
}

/** Makes the versions.json inside a payload directory say that object `a` has `version`. */
async function sayVersion(payloadDir: string, version: string): Promise<void> {
  const versionsPath = join(payloadDir, '.metadata', 'versions.json');
  const doc = JSON.parse(await readFile(versionsPath, 'utf8')) as { objects: { id: string; version: string }[] };
  await writeFile(versionsPath, JSON.stringify({ ...doc, objects: [{ id: 'a', version }] }));
}

describe('VolumePublisher', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-pub-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const req = (name: string) => publishRequest(join(dir, name));

  it('keeps the mounted files when the answer has no files and exactly the mounted versions (answered from version properties)', async () => {
    let answer: 'full' | 'versions-only' | 'other-version' = 'full';
    const publisher = dirPublisher({
      providers: {
        mount: async () =>
          answer === 'full'
            ? {
                files: [{ path: 'a', mode: 0o644, contents: Buffer.from('one') }],
                object_version: [{ id: 'secret/a', version: 'v1' }],
                error: null,
              }
            : {
                files: [],
                object_version: [{ id: 'secret/a', version: answer === 'versions-only' ? 'v1' : 'v2' }],
                error: null,
              },
      },
    });
    const r = req('versions-only');
    await publisher.publish(r);
    const data = await readlink(join(r.targetPath, '..data'));
    answer = 'versions-only';
    const kept = await publisher.publish(r, {}, 'rotation');
    expect(kept.changed).to.equal(false);
    expect(kept.versions).to.deep.equal([{ id: 'secret/a', version: 'v1' }]);
    expect(await readlink(join(r.targetPath, '..data'))).to.equal(data);
    expect(await readFile(join(r.targetPath, 'a'), 'utf8')).to.equal('one');
    // Other versions without files are written as they say: no file left for a.
    answer = 'other-version';
    const written = await publisher.publish(r, {}, 'rotation');
    expect(written.changed).to.equal(true);
    expect(await readFile(join(r.targetPath, 'a'), 'utf8').catch((e: NodeJS.ErrnoException) => e.code)).to.equal(
      'ENOENT',
    );
  });

  it("a republish skipped as fresh hands kubelet's new request to the skipped-hooks (and to no other hook)", async () => {
    const seen: { hook: string; skipped: boolean; secret: string | undefined }[] = [];
    const publisher = dirPublisher({
      hooks: [
        async (v) => {
          seen.push({ hook: 'publish', skipped: v.skipped, secret: v.request.secrets['ca.key'] });
        },
      ],
      skippedHooks: [
        async (v) => {
          seen.push({ hook: 'skipped', skipped: v.skipped, secret: v.request.secrets['ca.key'] });
        },
      ],
      republish: () => 'skip',
    });
    const r = req('skipped-hooks');
    await publisher.publish({ ...r, secrets: { 'ca.key': 'old' } });
    const result = await publisher.publish({ ...r, secrets: { 'ca.key': 'new' } });
    expect(result.skipped).to.equal(true);
    expect(seen).to.deep.equal([
      { hook: 'publish', skipped: false, secret: 'old' },
      { hook: 'skipped', skipped: true, secret: 'new' },
    ]);
  });

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
    const p = publisherWith([
      async (v) => {
        seen.push(v.changed);
        if (fail) throw new Error('API down');
      },
    ]);
    await p.publisher.publish(req('owed'));
    fail = true;
    p.set('v2');
    await p.publisher.publish(req('owed'), {}, 'rotation').catch(() => undefined);
    fail = false;
    await p.publisher.publish(req('owed'), {}, 'rotation');
    await p.publisher.publish(req('owed'), {}, 'rotation');
    expect(seen).to.deep.equal([true, true, true, false]);
  });

  it("a failure says whether new content was written before it (upstream's rotated label)", async () => {
    let fail = false;
    const p = publisherWith([
      async () => {
        if (fail) throw new Error('API down');
      },
    ]);
    await p.publisher.publish(req('rotated'));
    fail = true;
    const unchanged = await p.publisher.publish(req('rotated'), {}, 'rotation').then(
      () => undefined,
      (e: unknown) => e,
    );
    p.set('v2');
    const changed = await p.publisher.publish(req('rotated'), {}, 'rotation').then(
      () => undefined,
      (e: unknown) => e,
    );
    // Hooks still owed from the round before, nothing new written: not rotated.
    const owedOnly = await p.publisher.publish(req('rotated'), {}, 'rotation').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect([unchanged, changed, owedOnly].map((e) => e instanceof PublishError && e.rotated)).to.deep.equal([
      false,
      true,
      false,
    ]);
  });

  it('sends the versions it wrote without reading .metadata/versions.json back, while ..data stays put', async () => {
    const p = publisherWith([]);
    const r = req('versions');
    await p.publisher.publish(r);
    // Apps may not change the file, but if it were gone, the driver still knows what it wrote.
    await unlink(join(r.targetPath, '.metadata', 'versions.json'));
    await p.publisher.publish(r, {}, 'rotation');
    p.set('v2');
    await p.publisher.publish(r, {}, 'rotation');
    await p.publisher.publish(r, {}, 'rotation');
    expect(p.sentVersions).to.deep.equal([[], ['a=v1'], ['a=v1'], ['a=v2']]);
  });

  it('reads the versions from disk when ..data moved under it (or after forget)', async () => {
    const p = publisherWith([]);
    const r = req('moved');
    await p.publisher.publish(r);
    // Someone else re-points ..data at a copy whose versions.json says v0.
    const old = await readlink(join(r.targetPath, '..data'));
    const copy = '..2000_01_01_00_00_00.copy';
    await rename(join(r.targetPath, old), join(r.targetPath, copy));
    await sayVersion(join(r.targetPath, copy), 'v0');
    await unlink(join(r.targetPath, '..data'));
    await symlink(copy, join(r.targetPath, '..data'));
    await p.publisher.publish(r, {}, 'rotation'); // sends what the moved versions.json says
    // The files (and .metadata/a) matched, so nothing was rewritten: from now on the
    // publisher knows the payload directory holds what the provider returned...
    await p.publisher.publish(r, {}, 'rotation');
    // ...and once the target is forgotten (NodeUnpublishVolume) it knows nothing and reads the disk again.
    p.targets.forget(r.targetPath);
    await p.publisher.publish(r, {}, 'rotation');
    expect(p.sentVersions).to.deep.equal([[], ['a=v0'], ['a=v1'], ['a=v0']]);
  });

  it('forgets a target a rotation refresh finds unmounted (what it knew is stale)', async () => {
    const p = publisherWith([]);
    const r = req('forgotten');
    await p.publisher.publish(r);
    // Kubelet's cleanup took the volume away without an unpublish (DirMounter: no ..data)...
    const dataDir = await readlink(join(r.targetPath, '..data'));
    await unlink(join(r.targetPath, '..data'));
    expect((await p.publisher.publish(r, {}, 'rotation')).skipped).to.equal(true);
    // ...and the same payload directory comes back, its versions.json now saying v0.
    await sayVersion(join(r.targetPath, dataDir), 'v0');
    await symlink(dataDir, join(r.targetPath, '..data'));
    await p.publisher.publish(r, {}, 'rotation');
    // Remembering across the gap would have sent v1 for the same ..data; it reads the disk.
    expect(p.sentVersions).to.deep.equal([[], ['a=v0']]);
  });
});
