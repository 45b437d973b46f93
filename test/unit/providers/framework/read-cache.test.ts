import { expect } from 'chai';
import { inspect } from 'node:util';
import { jsonBytes } from '../../../../providers/vault/lease-store.js';
import { leaseOf } from '../../../../providers/vault/lease-policy.js';
import { ReadCache, type ReadCacheOptions } from '../../../../providers/framework/read-cache.js';
import { deferred, rejection } from '../../../support/deferred.js';

const SECRET = 'hunter2-Zq9-never-print';
const ALICE = '{"serviceAccount":"ns/alice"}';
const BOB = '{"serviceAccount":"ns/bob"}';
const DB = '{"method":"GET","path":"secret/data/db"}';
const API = '{"method":"GET","path":"secret/data/api"}';

interface Body {
  readonly data: Record<string, unknown>;
  readonly lease_id?: string;
}

/** A cache on a test clock, counting its hooks. */
function cache(options: Partial<ReadCacheOptions<Body>> = {}) {
  let t = 5_000_000;
  const counts = { hit: 0, miss: 0, coalesced: 0 };
  const c = new ReadCache<Body>({
    weigh: jsonBytes,
    shareable: (b) => !leaseOf(b),
    now: () => t,
    hooks: {
      hit: () => {
        counts.hit++;
      },
      miss: () => {
        counts.miss++;
      },
      coalesced: () => {
        counts.coalesced++;
      },
    },
    ...options,
  });
  return {
    c,
    counts,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

/** A load counting its calls, answering `body`. */
function loader(body: Body = { data: { password: SECRET } }) {
  const calls = { n: 0 };
  return {
    calls,
    load: async () => {
      calls.n++;
      return body;
    },
  };
}

describe('vault ReadCache', () => {
  it('reads once per identity and request within the window', async () => {
    const { c, counts, advance } = cache();
    const { calls, load } = loader();
    expect((await c.read(ALICE, DB, load)).data['password']).to.equal(SECRET);
    advance(4_999);
    await c.read(ALICE, DB, load);
    expect([calls.n, counts]).to.deep.equal([1, { hit: 1, miss: 1, coalesced: 0 }]);
  });

  it('reads again once the window, counted from when the read was sent, is over', async () => {
    const { c, advance } = cache();
    const slow = deferred<Body>();
    let calls = 0;
    const load = () => {
      calls++;
      return calls === 1 ? slow.promise : Promise.resolve({ data: { v: 2 } });
    };
    const first = c.read(ALICE, DB, load);
    advance(3_000); // the read took 3 s: it serves 2 s more, not 5
    slow.resolve({ data: { v: 1 } });
    await first;
    advance(1_999);
    expect((await c.read(ALICE, DB, load)).data).to.deep.equal({ v: 1 });
    advance(1);
    expect((await c.read(ALICE, DB, load)).data).to.deep.equal({ v: 2 });
    expect(c.size).to.equal(1);
  });

  it('never serves a read to another identity, nor for another request', async () => {
    const { c } = cache();
    const { calls, load } = loader();
    await c.read(ALICE, DB, load);
    await c.read(BOB, DB, load);
    await c.read(ALICE, API, load);
    expect(calls.n).to.equal(3);
  });

  it('coalesces identical reads in flight onto one request', async () => {
    const { c, counts } = cache();
    const read = deferred<Body>();
    let calls = 0;
    const load = () => {
      calls++;
      return read.promise;
    };
    const waiting = Array.from({ length: 100 }, () => c.read(ALICE, DB, load));
    read.resolve({ data: { password: SECRET } });
    expect((await Promise.all(waiting)).every((b) => b.data['password'] === SECRET)).to.equal(true);
    expect([calls, counts]).to.deep.equal([1, { hit: 0, miss: 1, coalesced: 99 }]);
  });

  it('does not cache a failed read: the waiters get its error, the next caller reads again', async () => {
    const { c } = cache();
    const read = deferred<Body>();
    let calls = 0;
    const failing = () => {
      calls++;
      return read.promise;
    };
    const waiting = [c.read(ALICE, DB, failing), c.read(ALICE, DB, failing)];
    read.reject(new Error('Vault is sealed'));
    for (const p of waiting) expect(((await rejection(p)) as Error).message).to.equal('Vault is sealed');
    expect(c.size).to.equal(0);
    const { calls: again, load } = loader();
    await c.read(ALICE, DB, load);
    expect([calls, again.n]).to.deep.equal([1, 1]);
  });

  it('neither caches nor shares a response with a lease: every caller gets its own credentials', async () => {
    const { c, counts } = cache();
    const first = deferred<Body>();
    let n = 0;
    const load = () => {
      n++;
      return n === 1
        ? first.promise
        : Promise.resolve({ data: { username: `u${n}` }, lease_id: `database/creds/app/${n}` });
    };
    const waiting = [c.read(ALICE, DB, load), c.read(ALICE, DB, load)];
    first.resolve({ data: { username: 'u1' }, lease_id: 'database/creds/app/1' });
    expect((await Promise.all(waiting)).map((b) => b.data['username'])).to.deep.equal(['u1', 'u2']);
    expect((await c.read(ALICE, DB, load)).data['username']).to.equal('u3');
    expect([c.size, counts]).to.deep.equal([0, { hit: 0, miss: 3, coalesced: 1 }]);
  });

  it('caches a KV v1 response: a lease_duration without a lease_id is no lease', async () => {
    const { c } = cache();
    const { calls, load } = loader({ data: { a: 'b' }, lease_id: '' });
    await c.read(ALICE, DB, load);
    await c.read(ALICE, DB, load);
    expect(calls.n).to.equal(1);
  });

  it('holds at most maxEntries, evicting the least recently used', async () => {
    const { c } = cache({ maxEntries: 2 });
    const { calls, load } = loader();
    for (const request of ['a', 'b']) await c.read(ALICE, request, load);
    await c.read(ALICE, 'a', load); // a is now the most recently used
    await c.read(ALICE, 'c', load);
    await c.read(ALICE, 'a', load);
    expect(calls.n).to.equal(3);
    await c.read(ALICE, 'b', load);
    expect([calls.n, c.size]).to.deep.equal([4, 2]);
  });

  it('holds at most maxBytes, and never a read larger than that', async () => {
    const body = { data: { cert: 'x'.repeat(300) } };
    const { c } = cache({ maxBytes: 700 });
    const { calls, load } = loader(body);
    for (const request of ['a', 'b', 'c']) await c.read(ALICE, request, load);
    expect(c.size).to.equal(2);
    expect(c.bytes).to.equal(2 * jsonBytes(body));
    await c.read(ALICE, 'a', load);
    expect(calls.n).to.equal(4);
    const { calls: bigCalls, load: big } = loader({ data: { cert: 'x'.repeat(800) } });
    await c.read(ALICE, 'big', big);
    await c.read(ALICE, 'big', big);
    expect(bigCalls.n).to.equal(2);
  });

  it('drops expired entries before evicting the least recently used live one', async () => {
    const { c, advance } = cache({ maxEntries: 2 });
    const { calls, load } = loader();
    await c.read(ALICE, 'old', load);
    advance(1_000);
    await c.read(ALICE, 'live', load);
    advance(1_000);
    await c.read(ALICE, 'old', load); // 'old' is now the most recently used, 'live' the least
    advance(3_000); // 'old' has expired, 'live' has 1 s left
    await c.read(ALICE, 'new', load);
    expect(c.size).to.equal(2);
    await c.read(ALICE, 'live', load);
    expect(calls.n).to.equal(3);
  });

  it('frees expired reads at a later store even when there is room', async () => {
    const { c, advance } = cache();
    const { load } = loader();
    await c.read(ALICE, 'old', load);
    advance(5_000); // 'old' has expired
    await c.read(ALICE, 'new', load);
    expect(c.size).to.equal(1);
  });

  it('with a window of 0 only coalesces reads in flight', async () => {
    const { c } = cache({ windowMs: 0 });
    const read = deferred<Body>();
    let calls = 0;
    const load = () => {
      calls++;
      return calls === 1 ? read.promise : Promise.resolve({ data: {} });
    };
    const waiting = [c.read(ALICE, DB, load), c.read(ALICE, DB, load)];
    read.resolve({ data: {} });
    await Promise.all(waiting);
    await c.read(ALICE, DB, load);
    expect([calls, c.size]).to.deep.equal([2, 0]);
  });

  it('with maxEntries 0 keeps nothing but still coalesces reads in flight', async () => {
    const { c, counts } = cache({ maxEntries: 0 });
    const read = deferred<Body>();
    let calls = 0;
    const load = () => {
      calls++;
      return calls === 1 ? read.promise : Promise.resolve({ data: {} });
    };
    const waiting = [c.read(ALICE, DB, load), c.read(ALICE, DB, load)];
    read.resolve({ data: {} });
    await Promise.all(waiting);
    await c.read(ALICE, DB, load);
    expect([calls, c.size, counts.coalesced]).to.deep.equal([2, 0, 1]);
  });

  it('serves a read whose weight is no whole number of bytes, keeping it only if the weight is a number', async () => {
    for (const [weight, kept] of [
      [0.4, true],
      [-3, true],
      [Number.NaN, false],
    ] as const) {
      const { c } = cache({ weigh: () => weight });
      const { calls, load } = loader();
      expect((await c.read(ALICE, DB, load)).data['password']).to.equal(SECRET);
      await c.read(ALICE, DB, load);
      expect([c.size, calls.n]).to.deep.equal(kept ? [1, 1] : [0, 2]);
    }
  });

  it('reuses a falsy value like any other', async () => {
    let t = 1_000;
    const c = new ReadCache<number>({ weigh: () => 8, now: () => t });
    let calls = 0;
    const load = async () => {
      calls++;
      return 0;
    };
    expect([await c.read(ALICE, DB, load), await c.read(ALICE, DB, load), calls]).to.deep.equal([0, 0, 1]);
    t += 5_000;
    await c.read(ALICE, DB, load);
    expect(calls).to.equal(2);
  });

  it('lets a caller give up while the others still get the read', async () => {
    const { c } = cache();
    const read = deferred<Body>();
    const load = () => read.promise;
    const gone = new AbortController();
    const leaving = c.read(ALICE, DB, load, gone.signal);
    const staying = c.read(ALICE, DB, load);
    gone.abort(new Error('deadline'));
    expect(((await rejection(leaving)) as Error).message).to.equal('deadline');
    read.resolve({ data: { password: SECRET } });
    expect((await staying).data['password']).to.equal(SECRET);
  });

  it('never shows what it holds to util.inspect, JSON.stringify or String()', async () => {
    const { c } = cache();
    await c.read(ALICE, DB, loader().load);
    for (const text of [
      inspect(c, { showHidden: true, depth: 9 }),
      String(c),
      JSON.stringify(c),
      JSON.stringify({ c }),
    ]) {
      expect(text).to.not.include(SECRET);
    }
    expect(String(c)).to.equal(`ReadCache { entries: 1, bytes: ${c.bytes}, windowMs: 5000 }`);
  });
});
