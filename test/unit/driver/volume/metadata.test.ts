import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  metadataFileName,
  metadataFiles,
  readMountedVersions,
  sortVersions,
  versionsFile,
  VERSIONS_FILE,
} from '../../../../driver/volume/metadata.js';

describe('metadataFileName', () => {
  const cases: [string, string][] = [
    ['db-password', 'db-password'],
    ['secret/foo', 'secret%2Ffoo'],
    ['a/b/c', 'a%2Fb%2Fc'],
    ['..', '%2E%2E'],
    ['.', '%2E'],
    ['...', '...'],
    ['..x', '..x'],
    ['versions.json', '%76ersions.json'],
    ['%76ersions.json', '%2576ersions.json'],
    ['%2E%2E', '%252E%252E'],
    ['with space', 'with%20space'],
    ['nul\0byte', 'nul%00byte'],
  ];
  for (const [id, name] of cases) {
    it(`${JSON.stringify(id)} → ${name}`, () => {
      const got = metadataFileName(id);
      expect(got).to.equal(name);
      expect(got).to.not.include('/');
      expect(['', '.', '..']).to.not.include(got);
    });
  }

  it('keeps very long ids within NAME_MAX and distinct', () => {
    const ids = [
      'a'.repeat(10_000),
      'a'.repeat(10_001),
      `${'a'.repeat(9_999)}b`,
      '/'.repeat(300),
      'é'.repeat(300),
      'x'.repeat(201),
    ];
    const names = ids.map(metadataFileName);
    for (const name of names) {
      expect(Buffer.byteLength(name)).to.be.at.most(255);
      expect(name).to.not.include('/');
    }
    expect(new Set(names).size).to.equal(ids.length);
    expect(names[0]).to.match(/^a{120}~[0-9a-f]{32}$/);
  });

  it('keeps 200-byte names unshortened', () => expect(metadataFileName('z'.repeat(200))).to.equal('z'.repeat(200)));

  // Regression test for a fixed bug: '~' is not escaped, so a short id spelled like another id's shortened name maps to the same file.
  it('a short id cannot collide with the shortened name of a long id', () => {
    const longName = metadataFileName('a'.repeat(300));
    expect(metadataFileName(longName)).to.not.equal(longName);
  });
});

describe('sortVersions', () => {
  it('sorts by id (code-unit order) without touching its input', () => {
    const input = [
      { id: 'b', version: '1' },
      { id: 'B', version: '2' },
      { id: 'a/b', version: '3' },
      { id: 'a', version: '4' },
    ];
    expect(sortVersions(input).map((v) => v.id)).to.deep.equal(['B', 'a', 'a/b', 'b']);
    expect(input.map((v) => v.id)).to.deep.equal(['b', 'B', 'a/b', 'a']);
  });
});

describe('metadataFiles and versionsFile', () => {
  const versions = [
    { id: 'z/key', version: 'v2' },
    { id: 'a', version: 'v1' },
  ];

  it('writes one 0644 file per object, named after the encoded id', () => {
    const files = metadataFiles(versions);
    expect([...files.keys()]).to.deep.equal(['.metadata/a', '.metadata/z%2Fkey']);
    expect(files.get('.metadata/z%2Fkey')).to.deep.equal({ mode: 0o644, contents: Buffer.from('v2') });
  });

  it('lists sorted ids, versions and the write time', () => {
    const file = versionsFile(versions, new Date('2026-01-02T03:04:05.000Z')).get(VERSIONS_FILE);
    expect(file?.mode).to.equal(0o644);
    expect(JSON.parse(file?.contents.toString() ?? '')).to.deep.equal({
      objects: [
        { id: 'a', version: 'v1' },
        { id: 'z/key', version: 'v2' },
      ],
      writeTime: '2026-01-02T03:04:05.000Z',
    });
  });
});

describe('readMountedVersions', () => {
  let root = '';
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ssc-metadata-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function target(name: string, versionsJson?: string): Promise<string> {
    const dir = join(root, name);
    await mkdir(join(dir, '.metadata'), { recursive: true });
    if (versionsJson !== undefined) await writeFile(join(dir, VERSIONS_FILE), versionsJson);
    return dir;
  }

  it('reads what versionsFile wrote', async () => {
    const versions = [
      { id: 'b', version: '2' },
      { id: 'a', version: '1' },
    ];
    const dir = await target('roundtrip', versionsFile(versions, new Date(0)).get(VERSIONS_FILE)?.contents.toString());
    expect(await readMountedVersions(dir)).to.deep.equal([
      { id: 'a', version: '1' },
      { id: 'b', version: '2' },
    ]);
  });

  const cases: [string, string | undefined, { id: string; version: string }[]][] = [
    ['missing file', undefined, []],
    ['garbage', 'not json {', []],
    ['JSON null', 'null', []],
    ['objects not a list', '{"objects":{"id":"a"}}', []],
    [
      'bad entries dropped, extra fields stripped',
      '{"objects":[{"id":"a","version":"1","x":1},{"id":2,"version":"1"},null,{"id":"b"}]}',
      [{ id: 'a', version: '1' }],
    ],
  ];
  for (const [name, json, expected] of cases) {
    it(`${name} → ${JSON.stringify(expected)}`, async () =>
      expect(await readMountedVersions(await target(name.replace(/\W/g, '_'), json))).to.deep.equal(expected));
  }

  it('a missing target directory → []', async () =>
    expect(await readMountedVersions(join(root, 'nope'))).to.deep.equal([]));
});
