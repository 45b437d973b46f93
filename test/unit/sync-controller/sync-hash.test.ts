import { expect } from 'chai';
import { SyncHashes, syncHash } from '../../../sync-controller/sync-hash.js';

describe('sync-controller syncHash', () => {
  const inputs = {
    classUid: 'spc-uid',
    classGeneration: 3,
    syncUid: 'ss-uid',
    syncGeneration: 7,
    forceSynchronization: 'force-1',
  };
  const data = new Map([
    ['tls.key', Buffer.from('k\0ey')],
    ['a', Buffer.from('pw-1')],
  ]);

  it("equals upstream's hash for the same inputs (vector from Go's encoding/json and crypto/pbkdf2)", async () => {
    expect(await syncHash(data, inputs)).to.equal(
      'v1:a313d1b7648fcec259c557b05f4b02a5e948ae2d1585ba2c91e8dbf2e64fc756',
    );
  });

  const changes: [string, Partial<typeof inputs>][] = [
    ['class recreated', { classUid: 'other' }],
    ['class spec changed', { classGeneration: 4 }],
    ['SecretSync spec changed', { syncGeneration: 8 }],
    ['forceSynchronization changed', { forceSynchronization: 'force-2' }],
  ];
  for (const [what, change] of changes)
    it(`changes when the ${what}`, async () => {
      expect(await syncHash(data, { ...inputs, ...change })).not.to.equal(await syncHash(data, inputs));
    });

  it('changes with the data, and not with the order keys were added', async () => {
    const reordered = new Map([...data].reverse());
    expect(await syncHash(reordered, inputs)).to.equal(await syncHash(data, inputs));
    expect(await syncHash(new Map([['a', Buffer.from('pw-2')]]), inputs)).not.to.equal(await syncHash(data, inputs));
  });

  it('SyncHashes: the same hash as syncHash, remembered per SecretSync, recomputed when anything changes', async () => {
    const hashes = new SyncHashes(2);
    const expected = await syncHash(data, inputs);
    expect(await hashes.hash(data, inputs)).to.equal(expected);
    expect(await hashes.hash(data, inputs)).to.equal(expected);
    expect(hashes.derivations).to.equal(1);
    const changed = new Map([...data, ['a', Buffer.from('pw-2')]]);
    expect(await hashes.hash(changed, inputs)).to.equal(await syncHash(changed, inputs));
    const forced = { ...inputs, forceSynchronization: 'force-2' };
    expect(await hashes.hash(changed, forced)).to.equal(await syncHash(changed, forced));
    expect(hashes.derivations).to.equal(3);
    expect(hashes.size).to.equal(1);
  });

  it('SyncHashes forgets the least recently hashed SecretSync beyond its bound', async () => {
    const hashes = new SyncHashes(2);
    for (const syncUid of ['a', 'b', 'c', 'b']) await hashes.hash(data, { ...inputs, syncUid });
    expect(hashes.size).to.equal(2);
    expect(hashes.derivations).to.equal(3);
    await hashes.hash(data, { ...inputs, syncUid: 'a' });
    expect(hashes.derivations).to.equal(4);
  });
});
