import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MountSyscalls } from '../../../../driver/mount/mount-syscalls.js';
import { TmpfsMounter } from '../../../../driver/mount/mounter.js';
import { SscError } from '../../../../lib/errors.js';

// TmpfsMounter's decisions ("is it mounted?") against a mountinfo file of our own: the real
// mount(2) path is covered by test/integration/mount-syscalls.test.ts and every publish
// test. Here the syscalls only record what they were asked to do, and the mountinfo
// file changes only when the test writes it, so a test can tell a re-read from a snapshot.

function mountinfoLine(id: number, mountPoint: string): string {
  return `${id} 1 0:${id} / ${mountPoint.replace(/ /g, '\\040')} rw,nosuid,nodev - tmpfs tmpfs rw,mode=755`;
}

describe('TmpfsMounter (mountinfo decisions)', () => {
  let dir: string;
  let mountinfo: string;
  let calls: string[];
  let reads: number;
  const syscalls: MountSyscalls = {
    kind: 'recorded',
    mountTmpfs: async (target) => {
      calls.push(`mount ${target}`);
    },
    unmount: async (target) => {
      calls.push(`unmount ${target}`);
      await writeMountinfo([]);
    },
  };

  async function writeMountinfo(points: readonly string[]): Promise<void> {
    await writeFile(
      mountinfo,
      ['22 1 253:1 / / rw - ext4 /dev/root rw', ...points.map((p, i) => mountinfoLine(100 + i, p))].join('\n') + '\n',
    );
  }

  /** A mounter whose mountinfo reads are counted, on a clock that moves only when told (`clock.ms`). */
  const clock = { ms: 0 };
  function mounter(): TmpfsMounter {
    const m = new TmpfsMounter(syscalls, mountinfo, () => clock.ms);
    // Count reads through a getter on the path: the mounter reads `mountInfoPath` once per read.
    Object.defineProperty(m, 'mountInfoPath', {
      get: () => {
        reads++;
        return mountinfo;
      },
    });
    return m;
  }

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'ssc-tmpfs-mounter-')));
    mountinfo = join(dir, 'mountinfo');
    calls = [];
    reads = 0;
    clock.ms = 1_000_000;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers from mountinfo: listed paths (also with spaces, also through a symlink) are mounted', async () => {
    const a = join(dir, 'pods', 'a vol');
    const b = join(dir, 'pods', 'b');
    await mkdir(a, { recursive: true });
    await mkdir(b, { recursive: true });
    await symlink(join(dir, 'pods'), join(dir, 'link'));
    await writeMountinfo([a]);
    const m = mounter();
    expect(await m.isMounted(a)).to.equal(true);
    expect(await m.isMounted(join(dir, 'link', 'a vol'))).to.equal(true);
    expect(await m.isMounted(b)).to.equal(false);
    expect(await m.isMounted(join(dir, 'pods', 'missing'))).to.equal(false);
    expect(reads, 'one snapshot for all four answers').to.equal(1);
  });

  it('re-reads mountinfo once the snapshot is older than 250 ms', async () => {
    const a = join(dir, 'a');
    await mkdir(a);
    await writeMountinfo([]);
    const m = mounter();
    expect(await m.isMounted(a)).to.equal(false);
    await writeMountinfo([a]); // mounted by someone else
    clock.ms += 250;
    expect(await m.isMounted(a), 'still the snapshot at 250 ms').to.equal(false);
    clock.ms += 1;
    expect(await m.isMounted(a)).to.equal(true);
    expect(reads).to.equal(2);
  });

  it('counts its own mount at once without re-reading mountinfo (a burst of first publishes)', async () => {
    await writeMountinfo([]);
    const m = mounter();
    const targets = [1, 2, 3].map((i) => join(dir, 'pods', `t${i}`));
    expect(await m.isMounted(targets[0]!)).to.equal(false);
    for (const t of targets) {
      await m.mount(t);
      // The file does not list it: only the mounter's own record can say "mounted".
      expect(await m.isMounted(t)).to.equal(true);
    }
    expect(calls).to.deep.equal(targets.map((t) => `mount ${t}`));
    expect(reads).to.equal(1);
  });

  it('re-reads mountinfo after an unmount and removes the directory', async () => {
    const t = join(dir, 'pods', 't');
    await mkdir(t, { recursive: true });
    await writeMountinfo([t]);
    const m = mounter();
    expect(await m.isMounted(t)).to.equal(true);
    await m.unmount(t);
    expect(calls).to.deep.equal([`unmount ${t}`]);
    expect(await m.isMounted(t)).to.equal(false);
    expect(reads).to.be.greaterThan(1);
    expect(existsSync(t)).to.equal(false);
  });

  it('lets secrets be written only into a mount point (another device than its parent)', async () => {
    const m = mounter();
    const refusal = (path: string): string => {
      try {
        m.assertWritable(path);
        return 'allowed';
      } catch (err) {
        return err instanceof SscError ? `${err.kind} ${err.reason}: ${err.message}` : String(err);
      }
    };
    const plain = join(dir, 'plain');
    await mkdir(plain);
    expect(refusal(plain)).to.equal(
      `failed-precondition TargetNotMounted: ${plain} is no longer a mount point; refusing to write secrets to the node's disk`,
    );
    expect(refusal(join(dir, 'missing'))).to.match(/^failed-precondition TargetNotMounted: /);
    expect(refusal('/proc'), '/proc is a mount point on every Linux').to.equal('allowed');
  });
});
