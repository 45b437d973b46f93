import { expect } from 'chai';
import { inspect } from 'node:util';
import {
  CACHEABLE_FILE_SYSTEMS,
  CONTENT_CACHE_ENTRIES,
  CONTENT_CACHE_MAX_FILE_BYTES,
  CONTENT_CACHE_MAX_IDLE_MS,
  RACY_WINDOW_MS,
  SourceContentCache,
  sameState,
  settledBefore,
  type FileState,
} from '../../../../providers/file/content-cache.js';

/** The file provider's cache of source files (content-cache.ts), on a clock the test moves. */
describe('file provider content cache (SourceContentCache)', () => {
  const T = 1_800_000_000_000;
  const state = (over: Partial<FileState> = {}): FileState => ({
    dev: 1,
    ino: 42,
    size: 6,
    mtimeMs: T - 5_000,
    ctimeMs: T - 5_000,
    ...over,
  });
  const served = (text = 's3cret') => ({ contents: Buffer.from(text), version: `v-${text}` });
  let clock = T;
  const EXT4 = 0xef53;
  const NFS = 0x6969;
  const cache = (fileSystem = EXT4) =>
    new SourceContentCache(
      () => clock,
      () => fileSystem,
    );
  beforeEach(() => {
    clock = T;
  });

  it('serves a settled file again while its state is the same', () => {
    const c = cache();
    c.remember('/r/a', state(), T, served());
    expect(c.lookup('/r/a', state())?.contents.toString()).to.equal('s3cret');
    expect(c.hits).to.equal(1);
  });

  const changes: [string, Partial<FileState>][] = [
    ['another inode (replaced by rename)', { ino: 43 }],
    ['another device', { dev: 2 }],
    ['another size', { size: 7 }],
    ['another mtime', { mtimeMs: T - 4_000 }],
    ['another ctime (chmod, write with the same mtime)', { ctimeMs: T - 1 }],
  ];
  for (const [what, change] of changes) {
    it(`reads again after ${what}, and forgets the old contents`, () => {
      const c = cache();
      c.remember('/r/a', state(), T, served());
      expect(c.lookup('/r/a', state(change))).to.equal(undefined);
      expect(c.size).to.equal(0);
      expect(c.lookup('/r/a', state())).to.equal(undefined);
    });
  }

  it('does not keep a file changed less than the racy window before the read began', () => {
    const c = cache();
    c.remember('/r/a', state({ ctimeMs: T - RACY_WINDOW_MS + 1, mtimeMs: T - RACY_WINDOW_MS + 1 }), T, served());
    expect(c.size).to.equal(0);
    c.remember('/r/a', state({ ctimeMs: T - RACY_WINDOW_MS, mtimeMs: T - RACY_WINDOW_MS }), T, served());
    expect(c.size).to.equal(1);
    expect([
      settledBefore(T - RACY_WINDOW_MS, T),
      settledBefore(T - RACY_WINDOW_MS + 1, T),
      settledBefore(T + 5, T),
    ]).to.deep.equal([true, false, false]);
  });

  it('does not keep a file larger than the size limit, nor one that changed size while read', () => {
    const c = cache();
    const big = 'x'.repeat(CONTENT_CACHE_MAX_FILE_BYTES + 1);
    c.remember('/r/big', state({ size: big.length }), T, served(big));
    c.remember('/r/grew', state({ size: 3 }), T, served());
    expect(c.size).to.equal(0);
  });

  it('forgets a file unused for the idle limit', () => {
    const c = cache();
    c.remember('/r/a', state(), T, served());
    clock = T + CONTENT_CACHE_MAX_IDLE_MS + 1;
    expect(c.lookup('/r/a', state())).to.equal(undefined);
    expect(c.size).to.equal(0);
  });

  it('drops idle files when another is remembered, least recently used first', () => {
    const c = cache();
    c.remember('/r/old', state(), T, served());
    clock = T + 1_000;
    c.remember('/r/used', state(), T, served());
    clock = T + CONTENT_CACHE_MAX_IDLE_MS + 500;
    c.remember('/r/new', state(), T, served());
    expect(c.size).to.equal(2);
    expect(c.lookup('/r/used', state())).not.to.equal(undefined);
  });

  it('keeps at most CONTENT_CACHE_ENTRIES files, forgetting the least recently used', () => {
    const c = cache();
    for (let i = 0; i < CONTENT_CACHE_ENTRIES; i++) c.remember(`/r/${i}`, state(), T, served());
    expect(c.lookup('/r/0', state())).not.to.equal(undefined); // 0 is now the most recently used
    c.remember('/r/new', state(), T, served());
    expect(c.size).to.equal(CONTENT_CACHE_ENTRIES);
    expect([c.lookup('/r/1', state()), c.lookup('/r/0', state()) !== undefined]).to.deep.equal([undefined, true]);
  });

  it('does not keep files of a file system whose stat may be stale (NFS)', () => {
    const c = cache(NFS);
    c.remember('/r/a', state(), T, served());
    expect(c.size).to.equal(0);
    expect(CACHEABLE_FILE_SYSTEMS.has(EXT4)).to.equal(true);
  });

  it('asks for the file system of a device once, whether or not it may be cached', () => {
    for (const fileSystem of [EXT4, NFS]) {
      let asked = 0;
      const c = new SourceContentCache(
        () => clock,
        () => {
          asked++;
          return fileSystem;
        },
      );
      c.remember('/r/a', state(), T, served());
      c.remember('/r/b', state(), T, served());
      c.remember('/r/c', state({ dev: 2 }), T, served());
      expect([asked, c.size]).to.deep.equal([2, fileSystem === EXT4 ? 3 : 0]);
    }
  });

  it('forgets idle files on any lookup, not only a lookup of that file', () => {
    const c = cache();
    c.remember('/r/a', state(), T, served());
    clock = T + 9 * 60_000;
    c.remember('/r/b', state(), T, served());
    clock = T + 15 * 60_000;
    expect(c.lookup('/r/b', state())).not.to.equal(undefined);
    expect(c.size).to.equal(1);
  });

  it('forgets idle files on the sweep when no Mount comes', () => {
    const c = cache();
    c.remember('/r/a', state(), T, served());
    clock = T + CONTENT_CACHE_MAX_IDLE_MS + 1;
    c.sweep();
    expect(c.size).to.equal(0);
  });

  it('compares every identifying field', () => {
    expect(sameState(state(), state())).to.equal(true);
    for (const [, change] of changes) expect(sameState(state(), state(change))).to.equal(false);
  });

  it('never shows contents through inspect, JSON or String', () => {
    const c = cache();
    c.remember('/r/a', state(), T, served());
    for (const text of [inspect(c, { depth: 10, showHidden: true }), JSON.stringify(c), String(c)]) {
      expect(text).not.to.include('s3cret');
      expect(text).to.match(/1 file|"files":1/);
    }
  });
});
