import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hmacVersion, loadOrCreateHmacKey, versionKey } from '../../../../providers/framework/hmac-version.js';
import { createLogger } from '../../../../lib/logging/logger.js';

const KEY = Buffer.alloc(32, 7);
const logger = createLogger({ component: 'test', silent: true });

describe('hmacVersion', () => {
  it("without a context is the plain HMAC-SHA-256 of the contents (the file provider's versions, unchanged)", () => {
    expect(hmacVersion(KEY, Buffer.from('hunter2'))).to.equal(
      createHmac('sha256', KEY).update('hunter2').digest('hex'),
    );
  });

  it('is neither the contents nor their bare hash, and depends on the key', () => {
    const v = hmacVersion(KEY, Buffer.from('hunter2'), 'ctx');
    expect(v).to.match(/^[0-9a-f]{64}$/);
    expect(v).to.not.include('hunter2');
    expect(v).to.not.equal(createHmac('sha256', Buffer.alloc(0)).update('hunter2').digest('hex'));
    expect(hmacVersion(Buffer.alloc(32, 8), Buffer.from('hunter2'), 'ctx')).to.not.equal(v);
  });

  const distinct: [string, [string | undefined, string], [string | undefined, string]][] = [
    ['a context moved into the contents', ['ab', 'c'], ['a', 'bc']],
    ['an empty context vs none', ['', 'x'], [undefined, 'x']],
    ['different contexts, same contents', ['a', 'x'], ['b', 'x']],
    ['same context, different contents', ['a', 'x'], ['a', 'y']],
  ];
  for (const [name, [c1, b1], [c2, b2]] of distinct) {
    it(`differs for ${name}`, () =>
      expect(hmacVersion(KEY, Buffer.from(b1), c1)).to.not.equal(hmacVersion(KEY, Buffer.from(b2), c2)));
  }

  it('is the same for the same key, context and contents (any node, any restart)', () => {
    expect(hmacVersion(Buffer.from(KEY), Buffer.from('x'), 'c')).to.equal(hmacVersion(KEY, Buffer.from('x'), 'c'));
  });

  it('is the same under the key converted once by versionKey', () => {
    for (const context of [undefined, 'c'])
      expect(hmacVersion(versionKey(KEY), Buffer.from('x'), context)).to.equal(
        hmacVersion(KEY, Buffer.from('x'), context),
      );
  });
});

describe('loadOrCreateHmacKey', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-hmac-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a missing key file (32 bytes, 0600) and reads the same key back', async () => {
    const path = join(dir, 'hmac.key');
    const created = await loadOrCreateHmacKey(path, logger);
    expect(created.length).to.equal(32);
    expect((await stat(path)).mode & 0o777).to.equal(0o600);
    expect(await loadOrCreateHmacKey(path, logger)).to.deep.equal(created);
  });

  it('reads an existing key (a mounted Secret) as its bytes', async () => {
    const path = join(dir, 'key');
    await writeFile(path, 'a-shared-key-of-enough-bytes\n');
    expect((await loadOrCreateHmacKey(path, logger)).toString()).to.equal('a-shared-key-of-enough-bytes\n');
    expect(await readFile(path, 'utf8')).to.equal('a-shared-key-of-enough-bytes\n');
  });

  it('refuses a key shorter than 16 bytes, naming the file', async () => {
    const path = join(dir, 'short');
    await writeFile(path, 'short');
    let error: unknown;
    try {
      await loadOrCreateHmacKey(path, logger);
    } catch (err) {
      error = err;
    }
    expect((error as Error).message).to.equal(`--hmac-key-file ${path} holds fewer than 16 bytes`);
  });

  it('without a file uses a random per-process key', async () => {
    const a = await loadOrCreateHmacKey('', logger);
    expect(a.length).to.equal(32);
    expect(await loadOrCreateHmacKey('', logger)).to.not.deep.equal(a);
  });
});
