import { expect } from 'chai';
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AtomicWriter,
  DATA_DIR_LINK,
  writeAtomically,
  type WriteStep,
} from '../../../../driver/volume/atomic-writer.js';
import type { Payload } from '../../../../driver/volume/payload.js';

// The atomic writer with a mount group (the pod's fsGroup as CSI volume_mount_group):
// every file, directory and link and the target itself get the group and the modes of
// the mount group rule (test/unit/driver/volume/ownership.test.ts), before `..data` is swapped.

const NOW = new Date('2026-11-22T00:12:09Z');
const f = (text: string, mode = 0o644) => ({ mode, contents: Buffer.from(text) });
const PAYLOAD: Payload = new Map([
  ['db-password', f('hunter2', 0o400)],
  ['shared', f('s', 0o440)],
  ['api/token', f('tok')],
  ['certs/deep/key.pem', f('KEY', 0o600)],
  ['.metadata/db-password', f('v1')],
]);
const VOLATILE: Payload = new Map([['.metadata/versions.json', f('{}')]]);
/** Group ids nobody here belongs to: chown to them needs root, as the driver has. */
const G1 = 41001;
const G2 = 41002;

interface Entry {
  readonly path: string;
  readonly gid: number;
  readonly mode: number;
  readonly kind: 'file' | 'dir' | 'link';
}

/** Every entry at and below `dir`, without following links. */
function walk(dir: string, rel = '.'): Entry[] {
  const s = lstatSync(join(dir, rel));
  const kind = s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : 'file';
  const entry: Entry = { path: rel, gid: s.gid, mode: s.mode & 0o7777, kind };
  if (kind !== 'dir') return [entry];
  return [
    entry,
    ...readdirSync(join(dir, rel))
      .sort()
      .flatMap((name) => walk(dir, rel === '.' ? name : `${rel}/${name}`)),
  ];
}

/** Entries reached through `..data` and the top-level links: what the pod sees. */
function live(dir: string): Entry[] {
  return walk(dir).filter((e) => !/^\.\.\d/.test(e.path));
}

const rootOnly = process.getuid?.() === 0 ? describe : describe.skip;

rootOnly('AtomicWriter with a mount group (runs as root, like the driver)', () => {
  let root = '';
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ssc-group-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function freshTarget(): Promise<string> {
    const dir = join(root, `t${n++}`);
    await mkdir(dir, { mode: 0o755 }); // as the tmpfs root is mounted (mode=0755)
    return dir;
  }

  it('gives every file, directory and link, and the target, the group; modes follow the rule', async () => {
    const t = await freshTarget();
    await writeAtomically(t, PAYLOAD, VOLATILE, NOW, G1);
    const dataDir = await readlink(join(t, DATA_DIR_LINK));
    const entries = walk(t);
    expect(entries.filter((e) => e.gid !== G1).map((e) => e.path)).to.deep.equal([]);
    const modeOf = (p: string) => entries.find((e) => e.path === p)?.mode;
    const expected: [string, number][] = [
      ['.', 0o2755],
      [dataDir, 0o2755],
      [`${dataDir}/api`, 0o2755],
      [`${dataDir}/certs/deep`, 0o2755],
      [`${dataDir}/.metadata`, 0o2755],
      [`${dataDir}/db-password`, 0o440],
      [`${dataDir}/shared`, 0o440],
      [`${dataDir}/api/token`, 0o644],
      [`${dataDir}/certs/deep/key.pem`, 0o640],
      [`${dataDir}/.metadata/db-password`, 0o644],
      [`${dataDir}/.metadata/versions.json`, 0o644],
    ];
    for (const [p, mode] of expected) expect(modeOf(p)?.toString(8), p).to.equal(mode.toString(8));
    expect(entries.filter((e) => e.kind === 'link').map((e) => e.path)).to.have.members([
      '..data',
      'db-password',
      'shared',
      'api',
      'certs',
      '.metadata',
    ]);
  });

  it('rewrites nothing when content, modes and group are unchanged, with or without its memory', async () => {
    const t = await freshTarget();
    const writer = new AtomicWriter();
    const first = await writer.write(t, PAYLOAD, VOLATILE, NOW, undefined, G1);
    expect(await writer.write(t, new Map(PAYLOAD), VOLATILE, NOW, undefined, G1)).to.deep.equal({
      changed: false,
      dataDir: first.dataDir,
    });
    expect(writer.wroteFor(t, G1)).to.equal(true);
    expect(writer.wroteFor(t, G2)).to.equal(false);
    expect(await new AtomicWriter().write(t, PAYLOAD, VOLATILE, NOW, undefined, G1)).to.deep.equal({
      changed: false,
      dataDir: first.dataDir,
    });
  });

  it('a write for another group rewrites everything for it; the pod sees the old group until the swap', async () => {
    const t = await freshTarget();
    await writeAtomically(t, PAYLOAD, VOLATILE, NOW, G1);
    const oldDataDir = await readlink(join(t, DATA_DIR_LINK));
    let seenBeforeSwap: Entry[] = [];
    let payloadBeforeSwap: Entry[] = [];
    const writer = new AtomicWriter({
      onStep: (step: WriteStep) => {
        if (step !== 'links-added') return;
        seenBeforeSwap = live(t).filter((e) => e.path !== '.' && e.kind !== 'link');
        const fresh = readdirSync(t).find((name) => /^\.\.\d/.test(name) && name !== oldDataDir);
        payloadBeforeSwap = fresh === undefined ? [] : walk(t, fresh);
      },
    });
    expect((await writer.write(t, PAYLOAD, VOLATILE, NOW, undefined, G2)).changed).to.equal(true);
    expect(payloadBeforeSwap.length).to.be.greaterThan(5);
    expect(
      payloadBeforeSwap.filter((e) => e.gid !== G2).map((e) => e.path),
      'new payload complete before the swap',
    ).to.deep.equal([]);
    expect(
      seenBeforeSwap.filter((e) => e.gid !== G1).map((e) => e.path),
      'what the pod saw before the swap',
    ).to.deep.equal([]);
    expect(
      walk(t)
        .filter((e) => e.gid !== G2)
        .map((e) => e.path),
      'after the swap',
    ).to.deep.equal([]);
  });

  it('a write naming no group leaves group ownership alone and compares modes only, as before', async () => {
    const t = await freshTarget();
    const plain: Payload = new Map([
      ['a', f('1')],
      ['.metadata/a', f('v')],
    ]);
    const first = await writeAtomically(t, plain, VOLATILE, NOW, G1);
    // Same bytes, 0644 files (the rule keeps them): nothing to write.
    expect(await writeAtomically(t, plain, VOLATILE, NOW)).to.deep.equal({ changed: false, dataDir: first.dataDir });
    // A 0400 file was 0440 for the group: without one it is 0400 again.
    expect((await writeAtomically(t, new Map([...plain, ['b', f('2', 0o400)]]), VOLATILE, NOW)).changed).to.equal(true);
    expect(walk(t).find((e) => e.path.endsWith('/b'))?.mode).to.equal(0o400);
  });

  it("without a group, the files get the driver's group as before", async () => {
    const t = await freshTarget();
    await writeAtomically(t, PAYLOAD, VOLATILE, NOW);
    expect(
      walk(t)
        .filter((e) => e.gid !== 0)
        .map((e) => e.path),
    ).to.deep.equal([]);
    expect(walk(t).find((e) => e.path === '.')?.mode).to.equal(0o755);
  });
});
