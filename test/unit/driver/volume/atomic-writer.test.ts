import { expect } from 'chai';
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtomicWriter, DATA_DIR_LINK, writeAtomically } from '../../../../driver/volume/atomic-writer.js';
import type { Payload } from '../../../../driver/volume/payload.js';
import { SscError } from '../../../../lib/errors.js';

const NOW = new Date('2026-11-22T00:12:09Z');
const f = (text: string, mode = 0o644) => ({ mode, contents: Buffer.from(text) });
const VOLATILE = (t: string): Payload => new Map([['.metadata/versions.json', f(`{"writeTime":"${t}"}`)]]);
const BASE: Payload = new Map([
  ['username', f('admin', 0o640)],
  ['password', f('hunter2', 0o600)],
  ['certs/ca.pem', f('CA', 0o444)],
  ['certs/deep/key.pem', f('KEY', 0o400)],
  ['.metadata/username', f('v1')],
]);

describe('writeAtomically', () => {
  let root = '';
  let n = 0;
  let oldUmask = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ssc-atomic-'));
    oldUmask = process.umask(0o077);
  });
  after(async () => {
    process.umask(oldUmask);
    await rm(root, { recursive: true, force: true });
  });

  async function freshTarget(): Promise<string> {
    const dir = join(root, `t${n++}`);
    await mkdir(dir);
    return dir;
  }
  const modeOf = async (p: string) => (await stat(p)).mode & 0o7777;
  const entries = async (dir: string) => (await readdir(dir)).sort();

  it('first write: ..data → timestamped dir, top-level links, exact modes despite umask 077, nested dirs', async () => {
    const t = await freshTarget();
    const result = await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    const dataDir = await readlink(join(t, DATA_DIR_LINK));
    expect(result).to.deep.equal({ changed: true, dataDir });
    expect(dataDir).to.match(/^\.\.2026_11_22_00_12_09\.[A-Za-z0-9]{6}$/);
    expect(await entries(t)).to.deep.equal(['..data', dataDir, '.metadata', 'certs', 'password', 'username'].sort());
    for (const name of ['username', 'password', 'certs', '.metadata']) {
      expect((await lstat(join(t, name))).isSymbolicLink(), name).to.equal(true);
      expect(await readlink(join(t, name))).to.equal(`..data/${name}`);
    }
    expect(await readFile(join(t, 'password'), 'utf8')).to.equal('hunter2');
    expect(await readFile(join(t, 'certs/deep/key.pem'), 'utf8')).to.equal('KEY');
    expect(await readFile(join(t, '.metadata/versions.json'), 'utf8')).to.equal('{"writeTime":"1"}');
    const modes: [string, number][] = [
      ['username', 0o640],
      ['password', 0o600],
      ['certs/ca.pem', 0o444],
      ['certs/deep/key.pem', 0o400],
      ['.metadata/username', 0o644],
    ];
    for (const [p, mode] of modes) expect(await modeOf(join(t, p)), p).to.equal(mode);
    expect(await modeOf(join(t, dataDir))).to.equal(0o755);
    expect((await stat(join(t, 'certs/deep'))).isDirectory()).to.equal(true);
  });

  // Regression test for a fixed bug: nested directories (certs/, .metadata/) get mkdir's 0755 narrowed by the umask (0700
  // here) and are never chmod'ed, so a non-root pod cannot read nested files or .metadata.
  it('nested directories are 0755 regardless of umask', async () => {
    const t = await freshTarget();
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    for (const d of ['certs', 'certs/deep', '.metadata']) expect(await modeOf(join(t, d)), d).to.equal(0o755);
  });

  it('an identical second write changes nothing, even with a new volatile file', async () => {
    const t = await freshTarget();
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    const before = await readlink(join(t, DATA_DIR_LINK));
    expect(await writeAtomically(t, new Map(BASE), VOLATILE('2'), new Date(NOW.getTime() + 60_000))).to.deep.equal({
      changed: false,
      dataDir: before,
    });
    expect(await readlink(join(t, DATA_DIR_LINK))).to.equal(before);
    expect(await readFile(join(t, '.metadata/versions.json'), 'utf8')).to.equal('{"writeTime":"1"}');
    expect((await entries(t)).filter((e) => e.startsWith('..2026'))).to.deep.equal([before]);
  });

  const changes: [string, Payload][] = [
    ['content', new Map([...BASE, ['password', f('hunter3', 0o600)]])],
    ['mode', new Map([...BASE, ['password', f('hunter2', 0o640)]])],
    ['nested content', new Map([...BASE, ['certs/deep/key.pem', f('KEY2', 0o400)]])],
  ];
  for (const [what, next] of changes) {
    it(`a ${what} change swaps ..data and removes the old directory`, async () => {
      const t = await freshTarget();
      await writeAtomically(t, BASE, VOLATILE('1'), NOW);
      const oldDir = await readlink(join(t, DATA_DIR_LINK));
      expect((await writeAtomically(t, next, VOLATILE('2'), NOW)).changed).to.equal(true);
      const newDir = await readlink(join(t, DATA_DIR_LINK));
      expect(newDir).to.not.equal(oldDir);
      expect(await entries(t)).to.deep.equal(['..data', newDir, '.metadata', 'certs', 'password', 'username'].sort());
      for (const [p, file] of next) {
        expect(await readFile(join(t, p), 'utf8'), p).to.equal(file.contents.toString());
        expect(await modeOf(join(t, p)), p).to.equal(file.mode);
      }
      expect(await readFile(join(t, '.metadata/versions.json'), 'utf8')).to.equal('{"writeTime":"2"}');
    });
  }

  it('removes the top-level link of a removed file and adds one for a new file', async () => {
    const t = await freshTarget();
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    const next = new Map([...BASE].filter(([p]) => p !== 'password'));
    next.set('token', f('tok'));
    expect((await writeAtomically(t, next, VOLATILE('2'), NOW)).changed).to.equal(true);
    const dataDir = await readlink(join(t, DATA_DIR_LINK));
    expect(await entries(t)).to.deep.equal(['..data', dataDir, '.metadata', 'certs', 'token', 'username'].sort());
    expect(await readFile(join(t, 'token'), 'utf8')).to.equal('tok');
  });

  it('leaves foreign top-level entries alone', async () => {
    const t = await freshTarget();
    await writeFile(join(t, 'unrelated'), 'x');
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    await writeAtomically(t, new Map([['username', f('other')]]), VOLATILE('2'), NOW);
    const dataDir = await readlink(join(t, DATA_DIR_LINK));
    expect(await entries(t)).to.deep.equal(['..data', dataDir, 'unrelated', 'username'].sort());
  });

  it('refuses when ..data is not a symlink', async () => {
    const t = await freshTarget();
    await mkdir(join(t, DATA_DIR_LINK));
    const err = await writeAtomically(t, BASE, VOLATILE('1'), NOW).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('failed-precondition');
    expect((err as SscError).message).to.equal(`${join(t, DATA_DIR_LINK)} is not a symlink`);
  });

  it('a regular file colliding with a new top-level name is an error naming it', async () => {
    const t = await freshTarget();
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    await writeFile(join(t, 'token'), 'mine');
    const err = await writeAtomically(t, new Map([...BASE, ['token', f('tok')]]), VOLATILE('2'), NOW).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('failed-precondition');
    expect((err as SscError).message).to.equal(
      `${join(t, 'token')} exists and is not a link into ..data; refusing to replace it`,
    );
    expect(await readFile(join(t, 'token'), 'utf8')).to.equal('mine');
  });

  // Regression test for a fixed bug: the collision is only detected after ..data was swapped, so a failed re-publish
  // serves a mix (new files, missing link) and leaks the old timestamped directory.
  it('after a collision the old payload stays in place and readable', async () => {
    const t = await freshTarget();
    await writeAtomically(t, BASE, VOLATILE('1'), NOW);
    const oldDir = await readlink(join(t, DATA_DIR_LINK));
    await writeFile(join(t, 'token'), 'mine');
    const next = new Map([...BASE, ['password', f('NEW', 0o600)], ['token', f('tok')]]);
    await writeAtomically(t, next, VOLATILE('2'), NOW).then(
      () => expect.fail('expected an error'),
      () => undefined,
    );
    expect(await readlink(join(t, DATA_DIR_LINK))).to.equal(oldDir);
    expect(await readFile(join(t, 'password'), 'utf8')).to.equal('hunter2');
    expect(await entries(t)).to.deep.equal(
      ['..data', oldDir, '.metadata', 'certs', 'password', 'token', 'username'].sort(),
    );
  });

  it('removes payload directories a crash left behind when it next writes', async () => {
    const t = await freshTarget();
    await writeAtomically(t, new Map([['a', { mode: 0o644, contents: Buffer.from('1') }]]), new Map(), new Date());
    await mkdir(join(t, '..2020_01_01_00_00_00.stray'));
    await writeAtomically(t, new Map([['a', { mode: 0o644, contents: Buffer.from('2') }]]), new Map(), new Date());
    const hidden = (await readdir(t)).filter((e) => e.startsWith('..') && e !== '..data');
    expect(hidden).to.have.length(1);
    expect(hidden[0]).to.equal(await readlink(join(t, '..data')));
  });

  it('AtomicWriter remembers digests of what it wrote: an unchanged write reads nothing back', async () => {
    const t = await freshTarget();
    const writer = new AtomicWriter();
    const payload = new Map([['a', { mode: 0o644, contents: Buffer.from('1') }]]);
    expect((await writer.write(t, payload, new Map(), new Date())).changed).to.equal(true);
    // Behind the writer's back: it trusts its memory while ..data still points where it wrote.
    const dataDir = await readlink(join(t, '..data'));
    await writeFile(join(t, dataDir, 'a'), 'tampered');
    expect((await writer.write(t, payload, new Map(), new Date())).changed).to.equal(false);
    // A writer without that memory reads the disk and repairs the file.
    expect((await new AtomicWriter().write(t, payload, new Map(), new Date())).changed).to.equal(true);
    expect(await readFile(join(t, 'a'), 'utf8')).to.equal('1');
  });

  it('AtomicWriter distrusts its memory once ..data points elsewhere, and after forget()', async () => {
    const t = await freshTarget();
    const writer = new AtomicWriter();
    const one = new Map([['a', { mode: 0o644, contents: Buffer.from('1') }]]);
    await writer.write(t, one, new Map(), new Date());
    await new AtomicWriter().write(
      t,
      new Map([['a', { mode: 0o644, contents: Buffer.from('2') }]]),
      new Map(),
      new Date(),
    );
    expect((await writer.write(t, one, new Map(), new Date())).changed).to.equal(true);
    expect(await readFile(join(t, 'a'), 'utf8')).to.equal('1');
    writer.forget(t);
    expect((await writer.write(t, one, new Map(), new Date())).changed).to.equal(false);
  });
});
