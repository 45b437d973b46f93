import { expect } from 'chai';
import { inspect } from 'node:util';
import type { MountedLease } from '../../../../providers/vault/lease-policy.js';
import { LeaseStore, type LeaseDropReason, type MountedObject } from '../../../../providers/vault/lease-store.js';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';
import { groupByRequest, objectConfigKey, requestKey } from '../../../../providers/vault/request-key.js';

const SECRET = 'pw-Zq9-never-print';
const TTL = 60_000;
const ALICE = '{"roleName":"app","serviceAccount":"ns/alice"}';
const BOB = '{"roleName":"app","serviceAccount":"ns/bob"}';

const [USER, PASS, CERT] = parseObjects(`
- objectName: user
  secretPath: database/creds/app
  secretKey: username
- objectName: pass
  secretPath: database/creds/app
  secretKey: password
- objectName: cert
  secretPath: pki/issue/web
  method: PUT
  secretArgs: {common_name: a.example.com}
`).objects as [VaultObject, VaultObject, VaultObject];

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

function lease(now: number, ttlMs = TTL): MountedLease {
  return { expiresAtMs: now + ttlMs, ttlMs, renewable: true, tokenExpiresAtMs: undefined };
}

function mounted(...pairs: [VaultObject, string | undefined][]): MountedObject[] {
  return pairs.map(([object, version]) => ({ object, version }));
}

/** A store with a clock and the reasons leases left it. */
function store(options: { maxLeases?: number; maxBytes?: number } = {}): {
  s: LeaseStore;
  c: ReturnType<typeof clock>;
  drops: LeaseDropReason[];
} {
  const c = clock();
  const drops: LeaseDropReason[] = [];
  return { s: new LeaseStore({ ...options, now: c.now, onDrop: (r) => drops.push(r) }), c, drops };
}

describe('vault request keys', () => {
  it('groups objects making the same request, so username and password come from one response', () => {
    const groups = groupByRequest([USER, CERT, PASS]);
    expect(groups.map((g) => g.objects.map((o) => o.objectName))).to.deep.equal([['user', 'pass'], ['cert']]);
  });

  it('tells requests apart by method, version, query and body; a GET has no body', () => {
    const [a, b, c, d, e, f] = parseObjects(`
- {objectName: a, secretPath: secret/data/x}
- {objectName: b, secretPath: "secret/data/x?version=2"}
- {objectName: c, secretPath: pki/issue/web, method: PUT, secretArgs: {common_name: a}}
- {objectName: d, secretPath: pki/issue/web, method: PUT, secretArgs: {common_name: b}}
- {objectName: e, secretPath: secret/data/x, secretArgs: {ignored: true}}
- {objectName: f, secretPath: pki/issue/web, method: POST, secretArgs: {common_name: a}}
`).objects as VaultObject[] as [VaultObject, VaultObject, VaultObject, VaultObject, VaultObject, VaultObject];
    expect(requestKey(a)).to.not.equal(requestKey(b));
    expect(requestKey(c)).to.not.equal(requestKey(d));
    expect(requestKey(c)).to.not.equal(requestKey(f));
    expect(requestKey(a)).to.equal(requestKey(e));
    expect(objectConfigKey(a)).to.not.equal(objectConfigKey(e));
  });
});

describe('vault LeaseStore', () => {
  const data = { username: 'v-app-1', password: SECRET };

  it('finds a held lease by identity and the versions the driver has mounted, with its data', () => {
    const { s, c } = store();
    expect(
      s.hold(
        ALICE,
        [
          { object: USER, version: 'v1' },
          { object: PASS, version: 'v2' },
        ],
        'db/l1',
        lease(c.now()),
        data,
      ),
    ).to.equal(true);
    const found = s.find(ALICE, mounted([USER, 'v1'], [PASS, 'v2']));
    expect(found?.leaseId).to.equal('db/l1');
    expect(found?.data).to.deep.equal(data);
    expect(found?.expiresAtMs).to.equal(c.now() + TTL);
    // A group that now lists fewer objects still finds the lease those it lists came from.
    expect(s.find(ALICE, mounted([PASS, 'v2']))?.leaseId).to.equal('db/l1');
  });

  const misses: [string, string, MountedObject[]][] = [
    ['another identity (never served across identities)', BOB, mounted([USER, 'v1'], [PASS, 'v2'])],
    [
      'the driver has another version mounted (another pod, a stale entry)',
      ALICE,
      mounted([USER, 'v1'], [PASS, 'other']),
    ],
    [
      'the driver has nothing mounted for one object (a new pod, a new object)',
      ALICE,
      mounted([USER, 'v1'], [PASS, undefined]),
    ],
    ['an object the lease did not produce joined the group', ALICE, mounted([USER, 'v1'], [PASS, 'v2'], [CERT, 'v1'])],
    ['the object was edited (other file permission)', ALICE, mounted([{ ...USER, filePermission: 0o600 }, 'v1'])],
    ['no objects', ALICE, []],
  ];
  for (const [name, identity, objects] of misses) {
    it(`finds nothing when ${name}`, () => {
      const { s, c } = store();
      s.hold(
        ALICE,
        [
          { object: USER, version: 'v1' },
          { object: PASS, version: 'v2' },
        ],
        'db/l1',
        lease(c.now()),
        data,
      );
      expect(s.find(identity, objects)).to.equal(undefined);
    });
  }

  it('finds nothing when the objects lead to two different leases', () => {
    const { s, c } = store();
    s.hold(ALICE, [{ object: USER, version: 'v1' }], 'db/l1', lease(c.now()), data);
    s.hold(ALICE, [{ object: PASS, version: 'v2' }], 'db/l2', lease(c.now()), data);
    expect(s.find(ALICE, mounted([USER, 'v1'], [PASS, 'v2']))).to.equal(undefined);
  });

  it('drops a lease when it ends, and when its issuing token ends first', () => {
    const { s, c, drops } = store();
    s.hold(ALICE, [{ object: USER, version: 'v1' }], 'db/l1', lease(c.now()), data);
    s.hold(
      ALICE,
      [{ object: PASS, version: 'v2' }],
      'db/l2',
      { ...lease(c.now()), tokenExpiresAtMs: c.now() + 10_000 },
      data,
    );
    c.advance(10_000);
    expect(s.find(ALICE, mounted([PASS, 'v2']))).to.equal(undefined);
    expect(s.find(ALICE, mounted([USER, 'v1']))?.leaseId).to.equal('db/l1');
    c.advance(TTL - 10_000 - 1);
    expect(s.find(ALICE, mounted([USER, 'v1']))?.leaseId).to.equal('db/l1');
    c.advance(1);
    expect(s.find(ALICE, mounted([USER, 'v1']))).to.equal(undefined);
    expect([s.size, s.bytes, drops]).to.deep.equal([0, 0, ['ended', 'ended']]);
  });

  it('does not hold a lease that has already ended', () => {
    const { s, c } = store();
    expect(s.hold(ALICE, [{ object: USER, version: 'v1' }], 'db/l1', lease(c.now(), 0), data)).to.equal(false);
    expect(s.size).to.equal(0);
  });

  it('holds at most maxLeases, evicting the least recently used', () => {
    const { s, c, drops } = store({ maxLeases: 2 });
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    s.hold(ALICE, [{ object: USER, version: 'b' }], 'l-b', lease(c.now()), data);
    expect(s.find(ALICE, mounted([USER, 'a']))).to.not.equal(undefined); // a is now the most recently used
    s.hold(ALICE, [{ object: USER, version: 'c' }], 'l-c', lease(c.now()), data);
    expect(['a', 'b', 'c'].map((v) => s.find(ALICE, mounted([USER, v]))?.leaseId)).to.deep.equal([
      'l-a',
      undefined,
      'l-c',
    ]);
    expect(drops).to.deep.equal(['capacity']);
  });

  it('evicts ended leases before live ones', () => {
    const { s, c, drops } = store({ maxLeases: 2 });
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    s.hold(ALICE, [{ object: USER, version: 'b' }], 'l-b', lease(c.now(), 1000), data);
    c.advance(1000);
    s.hold(ALICE, [{ object: USER, version: 'c' }], 'l-c', lease(c.now()), data);
    expect(['a', 'b', 'c'].map((v) => s.find(ALICE, mounted([USER, v]))?.leaseId)).to.deep.equal([
      'l-a',
      undefined,
      'l-c',
    ]);
    expect(drops).to.deep.equal(['ended']);
  });

  it('holds at most maxBytes of data, and never a lease larger than that', () => {
    const big = { certificate: 'x'.repeat(400) };
    const { s, c, drops } = store({ maxBytes: 1000 });
    expect(s.hold(ALICE, [{ object: CERT, version: 'a' }], 'l-a', lease(c.now()), big)).to.equal(true);
    expect(s.hold(ALICE, [{ object: CERT, version: 'b' }], 'l-b', lease(c.now()), big)).to.equal(true);
    expect(s.hold(ALICE, [{ object: CERT, version: 'c' }], 'l-c', lease(c.now()), big)).to.equal(true);
    expect(s.bytes).to.be.at.most(1000);
    expect(s.size).to.equal(2);
    expect(
      s.hold(ALICE, [{ object: CERT, version: 'd' }], 'l-d', lease(c.now()), { certificate: 'x'.repeat(2000) }),
    ).to.equal(false);
    expect(s.size).to.equal(2);
    expect(drops).to.deep.equal(['capacity', 'too-large']);
  });

  it('holds nothing with maxLeases 0', () => {
    const { s, c } = store({ maxLeases: 0 });
    expect(s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data)).to.equal(false);
    expect(s.find(ALICE, mounted([USER, 'a']))).to.equal(undefined);
  });

  it('records a renewal: the lease is found past its first expiry', () => {
    const { s, c } = store();
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    c.advance(TTL - 1000);
    expect(s.renewed(ALICE, 'l-a', lease(c.now()))).to.equal(true);
    c.advance(TTL - 1000);
    expect(s.find(ALICE, mounted([USER, 'a']))?.data).to.deep.equal(data);
    expect(s.renewed(BOB, 'l-a', lease(c.now()))).to.equal(false);
  });

  it('records a renewal of a lease that ended while it was being renewed, and keeps its byte count', () => {
    const { s, c, drops } = store();
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now(), 1000), data);
    const bytes = s.bytes;
    c.advance(1000); // ended, not yet swept
    expect(s.renewed(ALICE, 'l-a', lease(c.now()))).to.equal(true);
    expect(s.find(ALICE, mounted([USER, 'a']))?.expiresAtMs).to.equal(c.now() + TTL);
    expect([s.size, s.bytes, drops]).to.deep.equal([1, bytes, []]);
  });

  it('drops a lease whose renewal has already ended, as ended', () => {
    const { s, c, drops } = store();
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    expect(s.renewed(ALICE, 'l-a', lease(c.now(), 0))).to.equal(true);
    expect(s.find(ALICE, mounted([USER, 'a']))).to.equal(undefined);
    expect([s.size, s.bytes, drops]).to.deep.equal([0, 0, ['ended']]);
  });

  it('holding a lease again moves its index to the versions just returned, counting no drop', () => {
    const { s, c, drops } = store();
    s.hold(ALICE, [{ object: USER, version: 'v1' }], 'l-a', lease(c.now()), data);
    s.hold(ALICE, [{ object: USER, version: 'v2' }], 'l-a', lease(c.now()), data);
    expect(s.find(ALICE, mounted([USER, 'v1']))).to.equal(undefined);
    expect(s.find(ALICE, mounted([USER, 'v2']))?.leaseId).to.equal('l-a');
    expect([s.size, drops]).to.deep.equal([1, []]);
  });

  it('a newer lease producing the same version takes the link, and the older one leaving does not break it', () => {
    const { s, c } = store({ maxLeases: 2 });
    s.hold(ALICE, [{ object: USER, version: 'v1' }], 'l-old', lease(c.now()), data);
    s.hold(ALICE, [{ object: USER, version: 'v1' }], 'l-new', lease(c.now()), data);
    expect(s.find(ALICE, mounted([USER, 'v1']))?.leaseId).to.equal('l-new');
    s.release(ALICE, 'l-old');
    expect(s.find(ALICE, mounted([USER, 'v1']))?.leaseId).to.equal('l-new');
    s.hold(ALICE, [{ object: USER, version: 'v9' }], 'l-other', lease(c.now()), data);
    s.hold(ALICE, [{ object: USER, version: 'v8' }], 'l-more', lease(c.now()), data); // evicts l-new
    expect(s.find(ALICE, mounted([USER, 'v1']))).to.equal(undefined);
  });

  it('forgets a released lease (once)', () => {
    const { s, c, drops } = store();
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    s.release(ALICE, 'l-a');
    s.release(ALICE, 'l-a');
    expect([s.size, s.bytes, drops]).to.deep.equal([0, 0, ['released']]);
  });

  it('never shows the data to util.inspect, JSON.stringify or String()', () => {
    const { s, c } = store();
    s.hold(ALICE, [{ object: USER, version: 'a' }], 'l-a', lease(c.now()), data);
    const found = s.find(ALICE, mounted([USER, 'a']));
    for (const text of [
      inspect(s, { showHidden: true, depth: 9 }),
      String(s),
      JSON.stringify(s),
      JSON.stringify(found),
      inspect(found, { depth: 9 }),
      `${JSON.stringify({ s })}`,
    ]) {
      expect(text).to.not.include(SECRET);
    }
    expect(String(s)).to.equal(`LeaseStore { leases: 1, bytes: ${s.bytes} }`);
  });
});
