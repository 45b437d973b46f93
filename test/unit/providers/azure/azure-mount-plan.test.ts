import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SscError } from '../../../../lib/errors.js';
import { readEnvironmentFile, MAX_ENVIRONMENT_FILE_BYTES } from '../../../../providers/azure/environment-file.js';
import { identityKey } from '../../../../providers/azure/identities.js';
import {
  planEntries,
  unchangedFromProperties,
  uniqueVersions,
  type PlannedEntry,
  type VersionLister,
} from '../../../../providers/azure/mount-plan.js';
import { mountFiles } from '../../../../providers/azure/object-files.js';
import type { KeyVaultObject } from '../../../../providers/azure/objects.js';
import type { VersionProperties } from '../../../../providers/azure/version-history.js';

const object = (o: Partial<KeyVaultObject> = {}): KeyVaultObject => ({
  objectName: 'db',
  objectType: 'secret',
  objectAlias: undefined,
  objectVersion: undefined,
  objectVersionHistory: 0,
  objectFormat: 'pem',
  objectEncoding: 'utf-8',
  filePermission: undefined,
  fileName: 'db',
  ...o,
});
/** A lister answering both kinds of listing with `list`. */
const lister = (list: () => Promise<VersionProperties[]>): VersionLister => ({ all: list, forLatest: list });
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const versions: VersionProperties[] = [
  { version: 'a1', createdOn: at(1), enabled: true },
  { version: 'b2', createdOn: at(2), enabled: true },
  { version: 'c3', createdOn: at(3), enabled: true },
];

describe('azure mount plan', () => {
  it('a first Mount lists nothing: the latest comes with the value', async () => {
    let listed = 0;
    const entries = await planEntries(
      object(),
      new Map(),
      lister(async () => {
        listed++;
        return versions;
      }),
    );
    expect(entries.map((e) => [e.id, e.fileName, e.version])).to.deep.equal([['secret/db', 'db', '']]);
    expect(listed).to.equal(0);
  });

  it('a rotation lists the versions and plans the newest', async () => {
    const entries = await planEntries(
      object(),
      new Map([['secret/db', 'b2']]),
      lister(async () => versions),
    );
    expect(entries.map((e) => e.version)).to.deep.equal(['c3']);
  });

  it('two versions in the newest second: the read decides (version "")', async () => {
    const tie = [...versions, { version: 'd4', createdOn: at(3), enabled: true }];
    expect(
      (
        await planEntries(
          object(),
          new Map([['secret/db', 'c3']]),
          lister(async () => tie),
        )
      ).map((e) => e.version),
    ).to.deep.equal(['']);
  });

  it("a disabled newest version is read (so Key Vault's refusal shows), not taken as current", async () => {
    const disabled = [...versions, { version: 'd4', createdOn: at(4), enabled: false }];
    expect(
      (
        await planEntries(
          object(),
          new Map([['secret/db', 'd4']]),
          lister(async () => disabled),
        )
      ).map((e) => e.version),
    ).to.deep.equal(['']);
  });

  it('versions not listed for the latest (too many pages, no list permission): the value is read', async () => {
    const entries = await planEntries(object(), new Map([['secret/db', 'c3']]), {
      all: async () => versions,
      forLatest: async () => undefined,
    });
    expect(entries.map((e) => e.version)).to.deep.equal(['']);
  });

  it('a pinned version is planned without listing', async () => {
    const entries = await planEntries(
      object({ objectVersion: 'a1' }),
      new Map([['secret/db', 'a1']]),
      lister(async () => {
        throw new Error('listed');
      }),
    );
    expect(entries.map((e) => e.version)).to.deep.equal(['a1']);
  });

  it('a history: <file>/<i> with ids <type>/<name>/<i>, newest first', async () => {
    const entries = await planEntries(
      object({ objectVersionHistory: 2, objectAlias: 'pw', fileName: 'pw' }),
      new Map(),
      lister(async () => versions),
    );
    expect(entries.map((e) => [e.id, e.fileName, e.version])).to.deep.equal([
      ['secret/db/0', 'pw/0', 'c3'],
      ['secret/db/1', 'pw/1', 'b2'],
    ]);
  });

  const entry = (id: string, version: string): PlannedEntry => ({ object: object(), id, fileName: id, version });
  const cases: [string, PlannedEntry[], Record<string, string>, boolean][] = [
    ['all mounted', [entry('secret/a', '1'), entry('secret/b', '2')], { 'secret/a': '1', 'secret/b': '2' }, true],
    ['one newer', [entry('secret/a', '1'), entry('secret/b', '3')], { 'secret/a': '1', 'secret/b': '2' }, false],
    [
      'one unknown (ambiguous latest)',
      [entry('secret/a', '1'), entry('secret/b', '')],
      { 'secret/a': '1', 'secret/b': '2' },
      false,
    ],
    ['an object added to the class', [entry('secret/a', '1'), entry('secret/b', '2')], { 'secret/a': '1' }, false],
    ['an object removed from the class', [entry('secret/a', '1')], { 'secret/a': '1', 'secret/b': '2' }, false],
    [
      'the same object twice (PEM and PFX aliases), mounted once',
      [entry('secret/a', '1'), entry('secret/a', '1')],
      { 'secret/a': '1' },
      true,
    ],
    ['nothing mounted', [entry('secret/a', '1')], {}, false],
  ];
  for (const [name, planned, current, unchanged] of cases) {
    it(`unchangedFromProperties: ${name} → ${unchanged}`, () => {
      expect(unchangedFromProperties(planned, new Map(Object.entries(current)))).to.equal(unchanged);
    });
  }

  it('uniqueVersions merges an object listed twice and refuses it with two versions', () => {
    expect(uniqueVersions([entry('secret/a', '1'), entry('secret/a', '1'), entry('cert/a', '1')])).to.deep.equal([
      { id: 'secret/a', version: '1' },
      { id: 'cert/a', version: '1' },
    ]);
    expect(() => uniqueVersions([entry('secret/a', '1'), entry('secret/a', '2')])).to.throw(
      SscError,
      /"secret\/a" is listed twice with different versions/,
    );
  });

  it("mountFiles: modes from filePermission, else the Mount's permission; a path two objects write is refused naming both", () => {
    const files = mountFiles(
      [
        {
          entry: { ...entry('secret/a', '1'), object: object({ filePermission: 0o400 }) },
          contents: [{ suffix: '', bytes: Buffer.from('x') }],
        },
        {
          entry: entry('secret/b', '1'),
          contents: [
            { suffix: '.crt', bytes: Buffer.from('c') },
            { suffix: '', bytes: Buffer.from('y') },
          ],
        },
      ],
      0o640,
    );
    expect(files.map((f) => [f.path, f.mode])).to.deep.equal([
      ['secret/a', 0o400],
      ['secret/b.crt', 0o640],
      ['secret/b', 0o640],
    ]);
    expect(() =>
      mountFiles(
        [
          {
            entry: { ...entry('secret/tls', '1'), fileName: 'tls' },
            contents: [{ suffix: '.key', bytes: Buffer.from('k') }],
          },
          {
            entry: { ...entry('secret/other', '1'), fileName: 'tls.key' },
            contents: [{ suffix: '', bytes: Buffer.from('o') }],
          },
        ],
        0o644,
      ),
    ).to.throw(SscError, /"secret\/tls" and "secret\/other" both write "tls.key"/);
  });
});

describe('azure identities', () => {
  const place = {
    tenantId: 't1',
    authorityHost: 'https://login.microsoftonline.com/',
    customAuthority: false,
    serviceAccount: { namespace: 'apps', name: 'web' },
  };
  const key = Buffer.alloc(32, 7);
  it('one key per identity: workload identity by service account, service principal by secret digest, managed identity by client id', () => {
    const keys = [
      identityKey({ kind: 'workload-identity', clientId: 'c', token: 'tok-A' }, place, key),
      identityKey(
        { kind: 'workload-identity', clientId: 'c', token: 'tok-A' },
        { ...place, serviceAccount: { namespace: 'apps', name: 'other' } },
        key,
      ),
      identityKey({ kind: 'workload-identity', clientId: 'c', token: 'tok-A' }, { ...place, tenantId: 't2' }, key),
      identityKey({ kind: 'service-principal', clientId: 'c', clientSecret: 'sp-secret-1' }, place, key),
      identityKey({ kind: 'service-principal', clientId: 'c', clientSecret: 'sp-secret-2' }, place, key),
      identityKey({ kind: 'managed-identity', userAssignedIdentityId: undefined }, place, key),
      identityKey({ kind: 'managed-identity', userAssignedIdentityId: 'u' }, place, key),
    ];
    expect(new Set(keys).size).to.equal(keys.length);
    // Two pods of one service account share; the token itself is not part of the key.
    expect(identityKey({ kind: 'workload-identity', clientId: 'c', token: 'other-token' }, place, key)).to.equal(
      keys[0],
    );
    expect(keys.join(' ')).not.to.match(/sp-secret|tok-A/);
  });
});

describe('azure environment file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-azenv-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a small regular file', async () => {
    await writeFile(join(dir, 'env.json'), '{"name":"AzureStackCloud"}');
    expect(readEnvironmentFile(join(dir, 'env.json'))).to.equal('{"name":"AzureStackCloud"}');
  });

  const refused: [string, () => Promise<string>, RegExp][] = [
    ['a missing file', async () => join(dir, 'absent.json'), /cannot be opened \(ENOENT\)/],
    ['a directory', async () => dir, /is not a regular file/],
    ['/dev/zero (would never end)', async () => '/dev/zero', /is not a regular file/],
    [
      'a file over 64 KiB',
      async () => {
        await writeFile(join(dir, 'big.json'), Buffer.alloc(MAX_ENVIRONMENT_FILE_BYTES + 1, 32));
        return join(dir, 'big.json');
      },
      /is larger than 65536 bytes/,
    ],
  ];
  for (const [name, path, message] of refused) {
    it(`refuses ${name} (FAILED_PRECONDITION naming the path)`, async () => {
      const p = await path();
      expect(() => readEnvironmentFile(p)).to.throw(SscError, message);
    });
  }
});
