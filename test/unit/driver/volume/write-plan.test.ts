import { expect } from 'chai';
import { planWrite, sha256, topLevelName, type FileState } from '../../../../driver/volume/write-plan.js';
import type { Payload } from '../../../../driver/volume/payload.js';

const file = (text: string, mode = 0o644) => ({ mode, contents: Buffer.from(text) });
const payload = (entries: Record<string, [string, number?]>): Payload =>
  new Map(Object.entries(entries).map(([p, [text, mode]]) => [p, file(text, mode)]));
const stateOf = (p: Payload): Map<string, FileState> =>
  new Map([...p].map(([path, f]) => [path, { mode: f.mode, sha256: sha256(f.contents) }]));

describe('sha256', () => {
  it('is the hex SHA-256 of the bytes', () => {
    expect(sha256(Buffer.from('abc'))).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('topLevelName', () => {
  const cases: [string[], string[]][] = [
    [[], []],
    [
      ['b', 'a'],
      ['a', 'b'],
    ],
    [
      ['dir/x', 'dir/y', 'file', 'dir/sub/z'],
      ['dir', 'file'],
    ],
    [
      ['.metadata/a', 'x'],
      ['.metadata', 'x'],
    ],
  ];
  for (const [paths, names] of cases) {
    it(`${JSON.stringify(paths)} → ${JSON.stringify(names)}`, () =>
      expect([...new Set(paths.map(topLevelName))].sort()).to.deep.equal(names));
  }
});

describe('planWrite', () => {
  const base = payload({ user: ['admin'], pass: ['pw', 0o600], 'dir/a': ['A'], 'dir/b': ['B'] });
  const baseLinks = ['dir', 'pass', 'user'];

  const cases: [
    string,
    Map<string, FileState> | undefined,
    Payload,
    string[],
    { changed: boolean; linksToAdd: string[]; linksToRemove: string[] },
  ][] = [
    ['first write', undefined, base, [], { changed: true, linksToAdd: ['dir', 'pass', 'user'], linksToRemove: [] }],
    [
      'first write with stale links',
      undefined,
      payload({ user: ['x'] }),
      ['old'],
      { changed: true, linksToAdd: ['user'], linksToRemove: ['old'] },
    ],
    ['unchanged', stateOf(base), base, baseLinks, { changed: false, linksToAdd: [], linksToRemove: [] }],
    [
      'content change',
      stateOf(base),
      payload({ user: ['root'], pass: ['pw', 0o600], 'dir/a': ['A'], 'dir/b': ['B'] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: [] },
    ],
    [
      'nested content change',
      stateOf(base),
      payload({ user: ['admin'], pass: ['pw', 0o600], 'dir/a': ['A'], 'dir/b': ['B2'] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: [] },
    ],
    [
      'mode change only',
      stateOf(base),
      payload({ user: ['admin'], pass: ['pw', 0o400], 'dir/a': ['A'], 'dir/b': ['B'] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: [] },
    ],
    [
      'top-level file added',
      stateOf(base),
      new Map([...base, ['new', file('n')]]),
      baseLinks,
      { changed: true, linksToAdd: ['new'], linksToRemove: [] },
    ],
    [
      'nested file added',
      stateOf(base),
      new Map([...base, ['dir/c', file('C')]]),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: [] },
    ],
    [
      'top-level file removed',
      stateOf(base),
      payload({ user: ['admin'], 'dir/a': ['A'], 'dir/b': ['B'] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: ['pass'] },
    ],
    [
      'nested file removed',
      stateOf(base),
      payload({ user: ['admin'], pass: ['pw', 0o600], 'dir/a': ['A'] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: [] },
    ],
    [
      'whole directory removed',
      stateOf(base),
      payload({ user: ['admin'], pass: ['pw', 0o600] }),
      baseLinks,
      { changed: true, linksToAdd: [], linksToRemove: ['dir'] },
    ],
    [
      'file renamed',
      stateOf(base),
      payload({ username: ['admin'], pass: ['pw', 0o600], 'dir/a': ['A'], 'dir/b': ['B'] }),
      baseLinks,
      { changed: true, linksToAdd: ['username'], linksToRemove: ['user'] },
    ],
    [
      'same files, a link missing on disk',
      stateOf(base),
      base,
      ['dir', 'user'],
      { changed: true, linksToAdd: ['pass'], linksToRemove: [] },
    ],
    [
      'same files, an extra link on disk',
      stateOf(base),
      base,
      [...baseLinks, 'stray'],
      { changed: true, linksToAdd: [], linksToRemove: ['stray'] },
    ],
    [
      'same count, different path',
      stateOf(payload({ a: ['1'] })),
      payload({ b: ['1'] }),
      ['a'],
      { changed: true, linksToAdd: ['b'], linksToRemove: ['a'] },
    ],
    ['empty to empty', new Map(), new Map(), [], { changed: false, linksToAdd: [], linksToRemove: [] }],
  ];
  for (const [name, current, desired, links, expected] of cases) {
    it(name, async () => {
      const plan = await planWrite(current, stateOf(desired), links);
      expect({
        changed: plan.changed,
        linksToAdd: [...plan.linksToAdd].sort(),
        linksToRemove: [...plan.linksToRemove].sort(),
      }).to.deep.equal(expected);
      expect([...plan.wantedLinks].sort()).to.deep.equal([...new Set([...desired.keys()].map(topLevelName))].sort());
    });
  }
});

describe('planWrite with a mount group', () => {
  const state = (gid: number | undefined, mode = 0o440): Map<string, FileState> =>
    new Map([['pass', { mode, sha256: sha256(Buffer.from('pw')), ...(gid === undefined ? {} : { gid }) }]]);
  const cases: [string, Map<string, FileState>, Map<string, FileState>, boolean][] = [
    ['same group, content and modes: nothing written', state(2000), state(2000), false],
    ['another group: rewritten', state(2000), state(3000), true],
    ["on disk with the driver's group, now a mount group: rewritten", state(0), state(2000), true],
    ['written before without a known group, now a mount group: rewritten', state(undefined), state(2000), true],
    ['no mount group asked: the group on disk is not compared', state(2000), state(undefined), false],
    ['same group, mode changed: rewritten', state(2000, 0o440), state(2000, 0o640), true],
  ];
  for (const [name, current, desired, changed] of cases) {
    it(name, async () => expect((await planWrite(current, desired, ['pass'])).changed).to.equal(changed));
  }
});
