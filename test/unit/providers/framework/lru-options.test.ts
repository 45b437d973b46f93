import { expect } from 'chai';
import { LRUCache } from 'lru-cache';
import { entryBound, lifeUntil, ttlClock, ttlOf } from '../../../../providers/framework/lru-options.js';

/** The options the providers' caches give lru-cache (lru-options.ts), tried on lru-cache itself. */
describe('lru-cache options (lru-options.ts)', () => {
  it('entryBound keeps at most that many entries, evicting the least recently used', () => {
    const evicted: string[] = [];
    const dispose = (_v: number, k: string, reason: string) => {
      if (reason === 'evict') evicted.push(k);
    };
    const lru = new LRUCache<string, number>({ ...entryBound(2), dispose });
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).to.equal(1);
    lru.set('c', 3);
    expect([[...lru.rkeys()], lru.get('b'), evicted]).to.deep.equal([['a', 'c'], undefined, ['b']]);
    expect(() => entryBound(0)).to.throw(RangeError);
  });

  it("entryBound allocates nothing up front for a large bound (lru-cache's max would: ~17 MB for a million)", () => {
    const used = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const before = used();
    const lru = new LRUCache<string, number>(entryBound(1_000_000));
    lru.set('a', 1);
    expect(used() - before).to.be.below(1024 * 1024);
  });

  it('ttlClock: a jump of the clock is seen at once, and a clock at 0 still expires entries', () => {
    let t = 0;
    const lru = new LRUCache<string, number>({ max: 4, ttl: 10, ...ttlClock(() => t) });
    lru.set('a', 1);
    expect(lru.get('a')).to.equal(1);
    t = 11; // a reading of 0 counts as 1: 10 ms old
    expect(lru.get('a')).to.equal(1);
    t = 12;
    expect(lru.get('a')).to.equal(undefined);
  });

  it('ttlOf: an entry is gone exactly when its duration is over, not a ms later', () => {
    let t = 5_000;
    const lru = new LRUCache<string, number>({ max: 4, ttl: ttlOf(1_000), ...ttlClock(() => t) });
    lru.set('a', 1);
    t += 999;
    expect(lru.get('a')).to.equal(1);
    t += 1;
    expect(lru.get('a')).to.equal(undefined);
    expect(() => ttlOf(1)).to.throw(RangeError);
  });

  it('lifeUntil: an entry stored late is gone at its end; one ending within 1 ms is not to be stored', () => {
    let t = 5_000;
    const lru = new LRUCache<string, number>({ max: 4, ...ttlClock(() => t) });
    const life = lifeUntil(t, t + 300);
    if (life === undefined) throw new Error('expected a life');
    lru.set('a', 1, life);
    t += 299;
    expect(lru.get('a')).to.equal(1);
    t += 1;
    expect(lru.get('a')).to.equal(undefined);
    for (const end of [t + 1, t, t - 5, Number.NaN]) expect(lifeUntil(t, end)).to.equal(undefined);
    expect(lifeUntil(t, t + 2)).to.deep.equal({ ttl: 1, start: t });
  });
});
