import { expect } from 'chai';
import { readdirSync, watch, type FSWatcher } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { untilLogged } from '../../bin/child-process.js';
import { isPayloadDirName } from '../../driver/volume/payload-repair.js';
import { CAN_MOUNT, fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { checkVolume } from '../support/volume-invariants.js';

const FILES = 2000;

/** Class `big` serving `FILES` objects of generation `gen`: names f<gen-1> … f<gen+FILES-2>, sources under g<gen>/. */
function bigClass(gen: number): string {
  const objects = Array.from({ length: FILES }, (_, i) => ({
    objectName: `f${i + gen - 1}`,
    sourcePath: `g${gen}/f${i + gen - 1}`,
  }));
  return fileClass('big', objects);
}

async function writeGeneration(root: string, gen: number): Promise<void> {
  await mkdir(join(root, `g${gen}`), { recursive: true });
  for (let i = 0; i < FILES; i++) await writeFile(join(root, `g${gen}`, `f${i + gen - 1}`), `gen ${gen}`);
}

/** Where in the write the driver is killed. */
type KillPoint = 'payload directory created' | 'half the files written' | '..data swapped';

/**
 * Resolves when the driver's write into `target` reaches `point`, seen through inotify:
 * a new payload directory, then files appearing in it, then `..data` replaced.
 */
function reached(target: string, current: string, point: KillPoint): { done: Promise<void>; close: () => void } {
  const watchers: FSWatcher[] = [];
  const done = new Promise<void>((resolve) => {
    watchers.push(
      watch(target, (_, name) => {
        if (!name) return;
        if (isPayloadDirName(name) && name !== current) {
          if (point === 'payload directory created') resolve();
          else if (point === 'half the files written' && watchers.length === 1) {
            const dir = join(target, name);
            watchers.push(
              watch(dir, () => {
                if (readdirSync(dir).length >= FILES / 2) resolve();
              }),
            );
          }
        } else if (name === '..data') {
          // Also the fallback of the mid-payload point: the write may outrun the watcher.
          resolve();
        }
      }),
    );
  });
  return {
    done,
    close: () => {
      for (const w of watchers) w.close();
    },
  };
}

/** The generation every top-level file of the volume holds (all must agree). */
async function generationOf(target: string, names: readonly string[]): Promise<number> {
  const seen = new Set<string>();
  for (const name of names.filter((n) => n !== '.metadata')) seen.add(await readFile(join(target, name), 'utf8'));
  expect([...seen], 'every file from one generation').to.have.length(1);
  return Number([...seen][0]?.replace('gen ', ''));
}

describe('crash recovery: SIGKILL during a 2,000-file rotation write (real driver, file provider, tmpfs)', function () {
  this.timeout(180_000);
  const driverArgs = ['--enable-secret-rotation', '--rotation-poll-interval=1s'];
  let stack: DriverStack | undefined;
  const target = () => (stack as DriverStack).targetPath('big');

  before(async function () {
    if (!CAN_MOUNT) this.skip();
    stack = await startDriverStack({
      classes: { 'big.yaml': bigClass(1) },
      providerFiles: { placeholder: '' },
      driverArgs,
    });
    await writeGeneration(stack.providerRoot, 1);
    await stack.client.publish(stack.request(target(), 'big', 'big'));
    expect((await checkVolume(target())).names).to.have.length(FILES + 1);
  });
  after(async () => {
    await stack?.client.unpublish('vol-big', target()).catch(() => undefined);
    await stack?.stop();
  });

  const points: KillPoint[] = ['payload directory created', 'half the files written', '..data swapped'];
  points.forEach((point, i) => {
    const gen = i + 2;
    it(`killed when ${point}: after a restart every name resolves into the current ..data and versions.json matches the files`, async () => {
      const old = stack as DriverStack;
      const before = await checkVolume(target());
      // The next generation renames one object and changes every file: the rotation writes
      // a new payload of 2,000 files, adds one link and removes one.
      await writeGeneration(old.providerRoot, gen);
      const watching = reached(target(), before.dataDir, point);
      const tmpClass = join(old.spcDir, '.big.yaml.tmp');
      await writeFile(tmpClass, bigClass(gen));
      await rename(tmpClass, join(old.spcDir, 'big.yaml'));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        watching.done,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no write seen:\n${old.driver.stderr().slice(-3000)}`)), 30_000);
        }),
      ]);
      clearTimeout(timer);
      // Freeze the driver the moment the write gets there, then kill it: a real SIGKILL mid-write.
      old.driver.process.kill('SIGSTOP');
      old.driver.process.kill('SIGKILL');
      watching.close();
      await new Promise<void>((resolve) => old.driver.process.once('exit', () => resolve()));
      expect(await mountsUnder(target())).to.deep.equal([target()]);

      // Restarted without rotation, so nothing writes until the republish below.
      stack = await startDriverStack({ reuse: old });
      const after = await checkVolume(target());
      const seen = await generationOf(target(), after.names);
      expect([gen - 1, gen], `generation ${seen}`).to.include(seen);
      expect(after.names).to.have.length(FILES + 1);
      expect(after.objects).to.have.length(FILES);

      // The next write (a kubelet republish) completes the new generation on the repaired volume.
      await stack.client.publish(stack.request(target(), 'big', 'big'));
      const done = await checkVolume(target());
      expect(await generationOf(target(), done.names)).to.equal(gen);
      expect(done.names)
        .to.include(`f${gen + FILES - 2}`)
        .and.not.include(`f${gen - 2}`);
      expect((await readdir(target())).filter(isPayloadDirName)).to.deep.equal([
        await readlink(join(target(), '..data')),
      ]);
      // The next kill needs a driver that rotates again.
      await stack.client
        .unpublish('vol-big', target())
        .then(() => untilLogged((stack as DriverStack).driver, /"message":"volume unpublished"/));
      await stack.driver.stop();
      stack = await startDriverStack({ reuse: stack, driverArgs });
      await stack.client.publish(stack.request(target(), 'big', 'big'));
    });
  });
});
