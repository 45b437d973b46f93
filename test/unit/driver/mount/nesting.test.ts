import { expect } from 'chai';
import { lstat, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirMounter } from '../../../../driver/mount/mounter.js';
import {
  ancestorsOf,
  assertNoOverlap,
  findOverlap,
  isBelow,
  resolveAsFarAsExists,
  volumesBelow,
} from '../../../../driver/mount/nesting.js';
import { SscError } from '../../../../lib/errors.js';
import { dirPublisher, publishRequest } from '../../../support/dir-publisher.js';

describe('volume nesting (pure decisions)', () => {
  const below: [string, string, boolean][] = [
    ['/a/b', '/a', true],
    ['/a/b/c', '/a', true],
    ['/a', '/a', false],
    ['/ab', '/a', false],
    ['/a', '/a/b', false],
    ['/a', '/', true],
    ['/', '/', false],
    ['/a/..data/x', '/a', true],
  ];
  for (const [inner, outer, expected] of below) {
    it(`isBelow(${inner}, ${outer}) is ${expected}`, () => expect(isBelow(inner, outer)).to.equal(expected));
  }

  it('lists ancestors nearest first, / last', () => {
    expect(ancestorsOf('/a/b/c')).to.deep.equal(['/a/b', '/a', '/']);
    expect(ancestorsOf('/a')).to.deep.equal(['/']);
    expect(ancestorsOf('/')).to.deep.equal([]);
  });

  const overlaps: [string, string[], ReturnType<typeof findOverlap>][] = [
    ['/v/a/inner', ['/v/b', '/v/a'], { volume: '/v/a', targetInside: true }],
    ['/v', ['/w', '/v/a/mount'], { volume: '/v/a/mount', targetInside: false }],
    ['/v/a', ['/v/a', '/v/ab', '/v/b'], undefined],
    ['/v/a', [], undefined],
  ];
  for (const [target, volumes, expected] of overlaps) {
    it(`findOverlap(${target}, [${volumes.join(', ')}])`, () =>
      expect(findOverlap(target, volumes)).to.deep.equal(expected));
  }
});

describe('volume nesting (on disk)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-nest-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves a path as far as it exists, through ..data', async () => {
    await mkdir(join(dir, 'vol', '..2026_01_01.1'), { recursive: true });
    await symlink('..2026_01_01.1', join(dir, 'vol', '..data'));
    expect(await resolveAsFarAsExists(join(dir, 'vol', '..data', 'x', 'y'))).to.equal(
      join(dir, 'vol', '..2026_01_01.1', 'x', 'y'),
    );
    expect(await resolveAsFarAsExists(join(dir, 'missing', 'x'))).to.equal(join(dir, 'missing', 'x'));
  });

  it('finds volumes below a directory, without following symlinks or entering volumes', async () => {
    for (const v of ['a/v1', 'a/v1/nested', 'b/c/v2']) {
      await mkdir(join(dir, v), { recursive: true });
      await symlink('..x', join(dir, v, '..data'));
    }
    await mkdir(join(dir, 'elsewhere', 'v3'), { recursive: true });
    await symlink('..x', join(dir, 'elsewhere', 'v3', '..data'));
    await symlink(join(dir, 'elsewhere'), join(dir, 'link'));
    expect((await volumesBelow(dir)).sort()).to.deep.equal([
      join(dir, 'a/v1'),
      join(dir, 'b/c/v2'),
      join(dir, 'elsewhere/v3'),
    ]);
    expect(await volumesBelow(join(dir, 'a', 'v1'))).to.deep.equal([join(dir, 'a/v1/nested')]);
    expect(await volumesBelow(join(dir, 'none'))).to.deep.equal([]);
  });

  it('weighs operations in progress: an ancestor or descendant is an overlap, a symlink spelling of one is ABORTED', async () => {
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real'), join(dir, 'link'));
    const none = { volumesNear: async () => [] };
    const refusal = (target: string, inProgress: string[]) =>
      assertNoOverlap(target, none, [target, ...inProgress]).then(
        () => undefined,
        (e: SscError) => `${e.kind} ${e.reason}: ${e.message}`,
      );
    const t = join(dir, 't');
    expect(await refusal(join(t, 'in'), [t])).to.equal(
      `failed-precondition NestedTargetPath: target path ${join(t, 'in')} is inside the volume at ${t}: a volume nested in another breaks the outer volume's unpublish and rotation`,
    );
    expect(await refusal(t, [join(t, 'a', 'b')])).to.match(
      /^failed-precondition NestedTargetPath: target path \S+ contains the volume at \S+\/t\/a\/b:/,
    );
    expect(await refusal(join(dir, 'link', 'v'), [join(dir, 'real', 'v')])).to.equal(
      `aborted OperationInProgress: an operation for target path ${join(dir, 'link', 'v')} (as ${join(dir, 'real', 'v')}) is already in progress`,
    );
    expect(await refusal(join(dir, 'link', 'v', 'in'), [join(dir, 'real', 'v')])).to.match(
      /^failed-precondition NestedTargetPath: .* is inside the volume at .*\/real\/v:/,
    );
    expect(await refusal(t, [join(dir, 'tt'), join(dir, 'other')])).to.equal(undefined);
  });

  it('a publisher over --mount-mode=dir refuses targets in or around a volume, creating nothing', async () => {
    const publisher = dirPublisher();
    const req = (targetPath: string) => publishRequest(targetPath);
    const outer = join(dir, 'outer');
    await publisher.publish(req(outer));
    const refused: [string, string][] = [
      [join(outer, 'inner'), `target path ${join(outer, 'inner')} is inside the volume at ${outer}`],
      [join(outer, '..data', 'x'), `target path ${join(outer, '..data', 'x')} is inside the volume at ${outer}`],
      [dir, `target path ${dir} contains the volume at ${outer}`],
    ];
    for (const [target, message] of refused) {
      const err = await publisher.publish(req(target)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, target).to.be.instanceOf(SscError);
      expect((err as SscError).kind).to.equal('failed-precondition');
      expect((err as SscError).reason).to.equal('NestedTargetPath');
      expect((err as SscError).message).to.include(message);
    }
    // Nothing was created for the refused targets, and the outer volume is untouched.
    for (const target of [join(outer, 'inner'), join(outer, '..data', 'x')])
      expect(
        await lstat(target).then(
          () => 'created',
          () => 'absent',
        ),
        target,
      ).to.equal('absent');
    expect(await new DirMounter().isMounted(dir)).to.equal(false);
    expect(await new DirMounter().isMounted(outer)).to.equal(true);
    await new DirMounter().unmount(outer);
  });
});
