import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublishRequest } from '../../../../driver/publish/publish-request.js';
import { KeyedQueue } from '../../../../lib/concurrency.js';
import { LocalVolumes, type LocalVolumesOptions } from '../../../../driver/rotation/local-volumes.js';
import { RecordIndex } from '../../../../driver/rotation/record-store.js';
import {
  recordOwner,
  serializeVolumeRecord,
  VOLUME_RECORD_FILE,
  volumeRecordOf,
} from '../../../../driver/rotation/volume-record.js';
import type { Mounter } from '../../../../driver/mount/mounter.js';
import type { PublishedVolume } from '../../../../driver/publish/publisher.js';
import type { SecretProviderClass } from '../../../../driver/spc/secret-provider-class.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const OWNER = recordOwner('secrets-store.csi.k8s.io', '/run/a/csi.sock');
const logger = createLogger({ component: 'test', silent: true });

/** A mounter whose "mounted" targets are a set the test controls. */
function fakeMounter(mounted: Set<string>): Mounter {
  return {
    isMounted: async (t) => mounted.has(t),
    mount: async (t) => {
      mounted.add(t);
    },
    unmount: async (t) => {
      mounted.delete(t);
    },
    assertWritable: () => undefined,
    volumesNear: async () => [],
  };
}

function request(targetPath: string, pod: string, secrets: Record<string, string> = {}): PublishRequest {
  return {
    volumeId: `vol-${pod}`,
    targetPath,
    spcName: 'app',
    secrets,
    pod: { name: pod, namespace: 'default', uid: `uid-${pod}`, serviceAccountName: 'default' },
    volumeContext: {
      secretProviderClass: 'app',
      'csi.storage.k8s.io/pod.name': pod,
      'csi.storage.k8s.io/pod.namespace': 'default',
    },
  };
}

function published(req: PublishRequest, firstMount = true): PublishedVolume {
  const spc: SecretProviderClass = {
    namespace: 'default',
    name: 'app',
    provider: 'file',
    parameters: {},
    secretObjects: [],
    annotations: {},
  };
  return { request: req, spc, versions: [], changed: firstMount, firstMount, origin: 'kubelet', skipped: false };
}

describe('LocalVolumes: local mode finds its volumes again after a restart', () => {
  let work: string;
  let mounted: Set<string>;
  const targets: string[] = [];
  const options = (over: Partial<LocalVolumesOptions> = {}): LocalVolumesOptions => ({
    mounter: fakeMounter(mounted),
    intervalMs: 60_000,
    owner: OWNER,
    logger,
    mountPoints: async () => targets,
    ...over,
  });
  const target = async (name: string): Promise<string> => {
    const dir = join(work, name);
    await mkdir(dir, { recursive: true });
    mounted.add(dir);
    targets.push(dir);
    return dir;
  };

  beforeEach(async () => {
    work = await realpath(await mkdtemp(join(tmpdir(), 'ssc-local-volumes-')));
    mounted = new Set();
    targets.length = 0;
  });
  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('writes a record on publish, and rewrites it only when what it records changed', async () => {
    const a = await target('a');
    const volumes = new LocalVolumes(options());
    await volumes.notePublished(published(request(a, 'a', { password: 'p4ss' })));
    const first = await stat(join(a, VOLUME_RECORD_FILE));
    expect(first.mode & 0o777).to.equal(0o600);
    expect(await readFile(join(a, VOLUME_RECORD_FILE), 'utf8')).not.to.contain('p4ss');
    await volumes.notePublished(published(request(a, 'a', { password: 'p4ss' }), false));
    expect((await stat(join(a, VOLUME_RECORD_FILE))).ino, 'an unchanged record was rewritten').to.equal(first.ino);
    await volumes.notePublished(published({ ...request(a, 'a'), volumeId: 'vol-new' }, false));
    expect(JSON.parse(await readFile(join(a, VOLUME_RECORD_FILE), 'utf8'))).to.include({
      volumeId: 'vol-new',
      withheld: false,
    });
    expect((await readdir(a)).sort()).to.deep.equal([VOLUME_RECORD_FILE]);
  });

  it("records a volume mounted again after it was unmounted behind the driver's back", async () => {
    const a = await target('a');
    const volumes = new LocalVolumes(options());
    await volumes.notePublished(published(request(a, 'a')));
    await rm(join(a, VOLUME_RECORD_FILE)); // unmounted and mounted again by a first publish: the record went with the old tmpfs
    await volumes.notePublished(published(request(a, 'a'), true));
    expect(JSON.parse(await readFile(join(a, VOLUME_RECORD_FILE), 'utf8'))).to.include({ targetPath: a });
  });

  it('a new instance lists the recorded, still mounted volumes and rebuilds their requests', async () => {
    const [a, b] = [await target('a'), await target('b')];
    const before = new LocalVolumes(options());
    await before.notePublished(published(request(a, 'a')));
    await before.notePublished(published(request(b, 'b')));
    mounted.delete(b);
    const after = new LocalVolumes(options());
    const listed = await after.list();
    expect(listed.map((v) => v.targetPath)).to.deep.equal([a]);
    expect(listed[0]).to.include({ spcName: 'app', provider: 'file', intervalMs: 60_000 });
    expect(await after.rebuild(listed[0]!)).to.deep.equal(request(a, 'a'));
  });

  it('does not rotate a volume whose publish carried secrets until it is published again', async () => {
    const a = await target('a');
    await new LocalVolumes(options()).notePublished(published(request(a, 'a', { password: 'p4ss' })));
    const after = new LocalVolumes(options());
    expect(await after.list()).to.deep.equal([]);
    await after.notePublished(published(request(a, 'a', { password: 'p4ss' }), false));
    expect((await after.list()).map((v) => v.targetPath)).to.deep.equal([a]);
  });

  it('leaves alone records of another driver, copied records, and files it did not write', async () => {
    const [other, copied, linked, loose] = [
      await target('other'),
      await target('copied'),
      await target('linked'),
      await target('loose'),
    ];
    const own = await target('own');
    await new LocalVolumes(
      options({ owner: recordOwner('secrets-store.csi.k8s.io', '/run/b/csi.sock') }),
    ).notePublished(published(request(other, 'other')));
    await new LocalVolumes(options()).notePublished(published(request(own, 'own')));
    await writeFile(join(copied, VOLUME_RECORD_FILE), await readFile(join(own, VOLUME_RECORD_FILE)), { mode: 0o600 });
    await symlink(join(own, VOLUME_RECORD_FILE), join(linked, VOLUME_RECORD_FILE));
    await writeFile(
      join(loose, VOLUME_RECORD_FILE),
      serializeVolumeRecord(volumeRecordOf(request(loose, 'loose'), 'file', OWNER)),
    );
    await chmod(join(loose, VOLUME_RECORD_FILE), 0o644);
    const after = new LocalVolumes(options());
    expect((await after.list()).map((v) => v.targetPath)).to.deep.equal([own]);
  });

  it('in dir mode, finds targets through the index and prunes entries of targets that are gone', async () => {
    const index = new RecordIndex(join(work, 'csi.sock.volumes'));
    const [a, b] = [await target('a'), await target('b')];
    const before = new LocalVolumes(options({ index }));
    await before.notePublished(published(request(a, 'a')));
    await before.notePublished(published(request(b, 'b')));
    expect((await index.list()).sort()).to.deep.equal([a, b]);
    await rm(b, { recursive: true }); // unpublished while the driver was down
    mounted.delete(b);
    const after = new LocalVolumes(
      options({
        index,
        mountPoints: async () => {
          throw new Error('dir mode reads no mountinfo');
        },
      }),
    );
    expect((await after.list()).map((v) => v.targetPath)).to.deep.equal([a]);
    expect(await index.list()).to.deep.equal([a]);
  });

  it('in dir mode, an unpublish removes the index entry, and a publish right after it adds it back', async () => {
    const index = new RecordIndex(join(work, 'csi.sock.volumes'));
    const a = await target('a');
    const volumes = new LocalVolumes(options({ index }));
    await volumes.notePublished(published(request(a, 'a')));
    volumes.forget(a);
    await volumes.notePublished(published(request(a, 'a')));
    expect(await index.list()).to.deep.equal([a]);
    await volumes.forget(a);
    expect(await index.list()).to.deep.equal([]);
  });
});

describe('KeyedQueue', () => {
  it('runs the operations of one key in the order queued, even when an earlier one is slower', async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = queue.run('k', async () => {
      await gate;
      order.push('first');
    });
    const second = queue.run('k', async () => {
      order.push('second');
    });
    const other = queue.run('other', async () => {
      order.push('other');
    });
    await other;
    release();
    await Promise.all([first, second]);
    expect(order).to.deep.equal(['other', 'first', 'second']);
  });

  it('keeps going after an operation that throws', async () => {
    const queue = new KeyedQueue();
    await queue.run('k', async () => {
      throw new Error('boom');
    });
    let ran = false;
    await queue.run('k', async () => {
      ran = true;
    });
    expect(ran).to.equal(true);
  });
});
