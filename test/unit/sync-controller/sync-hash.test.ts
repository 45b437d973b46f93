import { expect } from 'chai';
import { syncHash } from '../../../sync-controller/sync-hash.js';

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
});
