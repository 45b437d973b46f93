import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AtomicWriter, type WriteStep } from '../../../../driver/volume/atomic-writer.js';
import { isPayloadDirName, repairTarget } from '../../../../driver/volume/payload-repair.js';
import type { Logger } from '../../../../lib/logging/logger.js';
import { generation } from '../../../support/crash-writer.js';
import { checkVolume } from '../../../support/volume-invariants.js';

const CRASH_WRITER = fileURLToPath(new URL('../../../support/crash-writer.js', import.meta.url));
const STEPS: readonly [WriteStep, 'old' | 'new'][] = [
  ['payload-dir-created', 'old'],
  ['payload-written', 'old'],
  ['links-added', 'old'],
  ['data-swapped', 'new'],
  ['links-removed', 'new'],
  ['old-payload-removed', 'new'],
];

/** Runs the crash writer for one generation; resolves with the signal that ended it (null: it finished). */
function runWriter(target: string, gen: number, crashAt: WriteStep | 'none'): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CRASH_WRITER, target, String(gen), crashAt], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === null && code !== 0 ? reject(new Error(`crash writer exited ${code}`)) : resolve(signal),
    );
  });
}

/** The generation whose content every file of the volume holds (all the same, or it throws). */
async function generationOf(target: string, names: readonly string[]): Promise<number> {
  const contents = new Set<string>();
  for (const name of names.filter((n) => n !== '.metadata')) {
    contents.add(
      name === 'dir' ? await readFile(join(target, 'dir/x'), 'utf8') : await readFile(join(target, name), 'utf8'),
    );
  }
  expect(contents.size, `mixed generations: ${[...contents].join(', ')}`).to.equal(1);
  return Number([...contents][0]?.replace('gen ', ''));
}

describe('atomic writer: a SIGKILL at each step of a write', function () {
  this.timeout(20_000);
  let root = '';
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ssc-crash-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function crashedTarget(step: WriteStep): Promise<string> {
    const target = join(root, `t${n++}`);
    await mkdir(target);
    expect(await runWriter(target, 1, 'none')).to.equal(null);
    expect(await runWriter(target, 2, step)).to.equal('SIGKILL');
    return target;
  }

  for (const [step, survivor] of STEPS) {
    it(`killed after ${step}: repair leaves the ${survivor} payload whole, every name resolving into ..data`, async () => {
      const target = await crashedTarget(step);
      await repairTarget(target);
      const view = await checkVolume(target);
      expect(await generationOf(target, view.names)).to.equal(survivor === 'old' ? 1 : 2);
      expect(view.names).to.deep.equal(
        survivor === 'old' ? ['.metadata', 'dir', 'f0', 'f1', 'f2'] : ['.metadata', 'dir', 'f1', 'f2', 'f3'],
      );
      expect(view.objects.map((o) => o.version)).to.satisfy((vs: string[]) =>
        vs.every((v) => v === (survivor === 'old' ? 'v1' : 'v2')),
      );
    });

    it(`killed after ${step}: the next write of a restarted writer repairs and writes whole`, async () => {
      const target = await crashedTarget(step);
      const { payload, volatile } = generation(3);
      expect((await new AtomicWriter().write(target, payload, volatile, new Date())).changed).to.equal(true);
      const view = await checkVolume(target);
      expect(await generationOf(target, view.names)).to.equal(3);
      expect(view.names).to.deep.equal(['.metadata', 'dir', 'f1', 'f2', 'f3', 'f4']);
    });
  }

  it('without a repair, a crash between the swap and the link removal leaves a dangling link (what repair is for)', async () => {
    const target = await crashedTarget('data-swapped');
    expect((await lstat(join(target, 'f0'))).isSymbolicLink()).to.equal(true);
    expect(
      await readFile(join(target, 'f0')).then(
        () => 'resolves',
        () => 'dangles',
      ),
    ).to.equal('dangles');
    await repairTarget(target);
    expect(await readdir(target)).not.to.include('f0');
  });

  it('an unchanged write after a crash before the swap repairs leftovers without rewriting', async () => {
    const target = await crashedTarget('links-added');
    const { payload, volatile } = generation(1);
    const result = await new AtomicWriter().write(target, payload, volatile, new Date());
    expect(result.changed).to.equal(false);
    await checkVolume(target);
  });

  it('repair leaves what the driver did not make: plain files and links elsewhere', async () => {
    const target = await crashedTarget('links-added');
    await writeFile(join(target, 'foreign'), 'x');
    await symlink('/etc/hostname', join(target, 'elsewhere'));
    const result = await repairTarget(target);
    expect(result.removedLinks).to.deep.equal(['f3']);
    expect(result.removedDirs).to.have.length(1);
    expect((await readdir(target)).sort()).to.include.members(['foreign', 'elsewhere']);
  });

  it('a cleanup that fails after the swap is a success, logged, and finished by the next write', async () => {
    const target = join(root, `t${n++}`);
    await mkdir(target);
    const warnings: string[] = [];
    const logger = {
      info: () => undefined,
      warn: (message: string) => {
        warnings.push(message);
      },
    } as unknown as Logger;
    let failCleanup = false;
    const writer = new AtomicWriter({
      logger,
      onStep: (step) => {
        if (step === 'links-removed' && failCleanup) throw new Error('EBUSY (injected)');
      },
    });
    const one = generation(1);
    await writer.write(target, one.payload, one.volatile, new Date());
    failCleanup = true;
    const two = generation(2);
    const result = await writer.write(target, two.payload, two.volatile, new Date());
    expect(result.changed).to.equal(true);
    expect(warnings).to.deep.equal([
      'new payload is live, but removing the old one failed; retrying on the next write',
    ]);
    expect((await readdir(target)).filter(isPayloadDirName)).to.have.length(2);
    failCleanup = false;
    const again = await writer.write(target, two.payload, two.volatile, new Date());
    expect(again.changed).to.equal(false);
    expect((await readdir(target)).filter(isPayloadDirName)).to.deep.equal([result.dataDir]);
    expect(await generationOf(target, (await checkVolume(target)).names)).to.equal(2);
  });

  it('repair of a target whose first write never swapped: no ..data, nothing left', async () => {
    const target = join(root, `t${n++}`);
    await mkdir(target);
    expect(await runWriter(target, 1, 'links-added')).to.equal('SIGKILL');
    const result = await repairTarget(target);
    expect(result.dataDir).to.equal(undefined);
    expect(await readdir(target)).to.deep.equal([]);
  });
});
