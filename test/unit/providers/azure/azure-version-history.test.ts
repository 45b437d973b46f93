import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import {
  latestVersion,
  selectVersionHistory,
  type VersionProperties,
} from '../../../../providers/azure/version-history.js';

// Upstream getLatestNKeyVaultObjects, with exactly N versions (upstream writes N+1).

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const v = (version: string, second: number | undefined, enabled?: boolean): VersionProperties => ({
  version,
  createdOn: second === undefined ? undefined : at(second),
  enabled,
});
// Listed in no particular order, as Key Vault's list-versions pages may be.
const VERSIONS = [v('v2', 20), v('v4', 40), v('v1', 10), v('v3', 30, false), v('v5', 50, true), v('v0', undefined)];

describe('azure version history', () => {
  const table: [string, string | undefined, number, string[]][] = [
    ['the N newest enabled, newest first (exactly N)', undefined, 2, ['v5', 'v4']],
    ['disabled versions are skipped', undefined, 3, ['v5', 'v4', 'v2']],
    ['from a pinned version', 'v4', 3, ['v4', 'v2', 'v1']],
    ['fewer when the object has fewer; no createdOn sorts last (Go zero time)', 'v2', 10, ['v2', 'v1', 'v0']],
    ['N of 0 writes none', undefined, 0, []],
  ];
  for (const [name, pinned, count, expected] of table) {
    it(name, () => {
      const picked = selectVersionHistory(VERSIONS, pinned, count, 'secret "db"');
      expect(picked.map((p) => p.version)).to.deep.equal(expected);
      expect(picked.map((p) => p.index)).to.deep.equal(expected.map((_, i) => i));
    });
  }

  it('versions created in the same second sort by version id, whatever the list order', () => {
    const a = [v('b', 5), v('a', 5), v('c', 4)];
    expect(selectVersionHistory(a, undefined, 3, 'x').map((p) => p.version)).to.deep.equal(['a', 'b', 'c']);
    expect(selectVersionHistory([...a].reverse(), undefined, 3, 'x').map((p) => p.version)).to.deep.equal([
      'a',
      'b',
      'c',
    ]);
    // Sub-second differences do not count: Key Vault's createdOn has whole seconds.
    expect(
      selectVersionHistory(
        [v('z', 5), { version: 'y', createdOn: new Date(at(5).getTime() + 900), enabled: true }],
        undefined,
        2,
        'x',
      ).map((p) => p.version),
    ).to.deep.equal(['y', 'z']);
  });

  it('a pinned version that is missing or disabled is NOT_FOUND naming the object and version', () => {
    for (const pinned of ['v3', 'nope']) {
      try {
        selectVersionHistory(VERSIONS, pinned, 2, 'secret "db"');
        expect.fail(pinned);
      } catch (err) {
        expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
          'not-found',
          'ObjectVersionNotFound',
        ]);
        expect((err as SscError).message).to.equal(
          `azure provider: secret "db": objectVersion "${pinned}" is not an enabled version, so its history cannot start there`,
        );
      }
    }
  });

  it('the latest version: newest created over all versions, ambiguous when two share its second', () => {
    expect(latestVersion(VERSIONS)).to.deep.equal({ version: 'v5', ambiguous: false });
    // A disabled newest version is still the one Key Vault serves (and refuses to read).
    expect(latestVersion([v('old', 1), v('new', 2, false)])).to.deep.equal({ version: 'new', ambiguous: false });
    expect(latestVersion([v('x', 7), v('w', 7), v('u', 6)])).to.deep.equal({ version: 'w', ambiguous: true });
    expect(latestVersion([])).to.deep.equal({ version: undefined, ambiguous: false });
  });
});
