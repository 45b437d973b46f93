import { expect } from 'chai';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMountSyscalls, mountProgram, type MountSyscalls } from '../../driver/mount/mount-syscalls.js';
import { parseMountInfo } from '../../driver/mount/mountinfo.js';
import { CAN_MOUNT, unmountAllUnder } from '../support/driver-stack.js';

async function mountLine(target: string): Promise<string | undefined> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const entry = parseMountInfo(text).find((e) => e.mountPoint === target);
  return entry ? text.split('\n').find((l) => l.split(' ')[4] === target) : undefined;
}

for (const [name, impl] of [
  ['the mount(2) addon', loadMountSyscalls()],
  ['the mount program', mountProgram],
] as [string, MountSyscalls][]) {
  describe(`tmpfs mounts through ${name}`, function () {
    let dir: string;
    before(async function () {
      // Mounting needs root with CAP_SYS_ADMIN (CI has it); without it there is nothing to test.
      if (!CAN_MOUNT) this.skip();
      if (name.includes('addon'))
        expect(impl.kind, 'the addon must be built (scripts/build-native.mjs)').to.equal('syscall');
      dir = await mkdtemp(join(tmpdir(), 'ssc-mnt-'));
    });
    after(async () => {
      if (!dir) return;
      await unmountAllUnder(dir);
      await rm(dir, { recursive: true, force: true });
    });

    it('mounts a nosuid,nodev tmpfs with mode 0755 and unmounts it', async () => {
      const target = join(dir, 'vol');
      await mkdir(target);
      await impl.mountTmpfs(target, 'mode=0755');
      const line = await mountLine(target);
      expect(line).to.match(/ - tmpfs tmpfs /);
      expect(line)
        .to.match(/nosuid/)
        .and.match(/nodev/);
      await impl.unmount(target);
      expect(await mountLine(target)).to.equal(undefined);
    });

    it('unmounts several targets at once, and names the errno for one that is not mounted', async () => {
      const targets = [1, 2, 3].map((i) => join(dir, `many-${i}`));
      for (const t of targets) {
        await mkdir(t);
        await impl.mountTmpfs(t, 'mode=0755');
      }
      await Promise.all(targets.map((t) => impl.unmount(t)));
      for (const t of targets) expect(await mountLine(t)).to.equal(undefined);
      const err = await impl.unmount(targets[0]!).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).to.be.instanceOf(Error);
      if (impl.kind === 'syscall')
        expect([(err as NodeJS.ErrnoException).code, (err as NodeJS.ErrnoException).syscall]).to.deep.equal([
          'EINVAL',
          'umount2',
        ]);
      else expect((err as Error).message).to.match(/not mounted/);
    });

    it('fails with a clear error for a missing target', async () => {
      const err = await impl.mountTmpfs(join(dir, 'missing'), 'mode=0755').catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      if (impl.kind === 'syscall') expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
      else expect((err as Error).message).to.match(/missing|No such file/);
    });
  });
}
