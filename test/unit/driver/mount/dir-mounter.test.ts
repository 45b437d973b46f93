import { expect } from 'chai';
import { mkdir, mkdtemp, rm, symlink, writeFile, lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirMounter } from '../../../../driver/mount/mounter.js';
import { SscError } from '../../../../lib/errors.js';

describe('DirMounter (--mount-mode=dir)', () => {
  let dir: string;
  const mounter = new DirMounter();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-dir-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts a directory as mounted only once the writer put ..data in it', async () => {
    const t = join(dir, 'a');
    await mounter.mount(t);
    expect(await mounter.isMounted(t)).to.equal(false);
    await symlink('..x', join(t, '..data'));
    expect(await mounter.isMounted(t)).to.equal(true);
  });

  it('removes a directory the driver wrote, and a missing one is success', async () => {
    const t = join(dir, 'a');
    await mounter.unmount(t);
    expect(
      await lstat(t).then(
        () => 'exists',
        () => 'gone',
      ),
    ).to.equal('gone');
    await mounter.unmount(t);
  });

  it('refuses to remove a directory holding files it did not write', async () => {
    const t = join(dir, 'foreign');
    await mkdir(t);
    await writeFile(join(t, 'precious'), 'data');
    const err = await mounter.unmount(t).catch((e: SscError) => e);
    expect((err as SscError).kind).to.equal('failed-precondition');
    expect(
      await lstat(join(t, 'precious')).then(
        () => 'kept',
        () => 'gone',
      ),
    ).to.equal('kept');
  });
});
