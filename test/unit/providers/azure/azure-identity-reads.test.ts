import { expect } from 'chai';
import { createLogger } from '../../../../lib/logging/logger.js';
import { ReadCache } from '../../../../providers/framework/read-cache.js';
import type { AzureAuth } from '../../../../providers/azure/auth-mode.js';
import { IdentityCache, type IdentityPlace } from '../../../../providers/azure/identities.js';
import type { KeyVaultReader } from '../../../../providers/azure/keyvault-reader.js';
import { LIST_REFUSAL_MS, listRefusalMemory, MountReads, type Read } from '../../../../providers/azure/mount-reads.js';
import type { KeyVaultObject } from '../../../../providers/azure/objects.js';

const PLACE: IdentityPlace = {
  tenantId: 't',
  authorityHost: 'https://login.example',
  customAuthority: true,
  serviceAccount: { namespace: 'shop', name: 'web' },
};
const CLIENTS = { agent: undefined, userAgent: '', count: () => undefined };
const sp = (clientId: string): AzureAuth => ({ kind: 'service-principal', clientId, clientSecret: 'not-a-secret' });

describe('azure IdentityCache', () => {
  it('keeps one identity per key, forgetting the least recently used beyond capacity', () => {
    const cache = new IdentityCache(2, CLIENTS);
    const a = cache.identity(sp('a'), PLACE);
    cache.identity(sp('b'), PLACE);
    expect(cache.identity(sp('a'), PLACE)).to.equal(a); // a is now the most recently used
    const b = cache.identity(sp('b'), PLACE);
    cache.identity(sp('c'), PLACE); // evicts a
    expect([cache.identity(sp('b'), PLACE) === b, cache.identity(sp('a'), PLACE) === a]).to.deep.equal([true, false]);
  });

  it('with a capacity of 0 keeps none: every Mount gets a new credential', () => {
    const cache = new IdentityCache(0, CLIENTS);
    expect(cache.identity(sp('a'), PLACE)).to.not.equal(cache.identity(sp('a'), PLACE));
  });

  it('keeps one reader per vault for an identity', () => {
    const identity = new IdentityCache(1, CLIENTS).identity(sp('a'), PLACE);
    const [one, two] = ['https://one.vault.azure.net', 'https://two.vault.azure.net'];
    const reader = identity.reader(one);
    expect([identity.reader(one) === reader, identity.reader(two) === reader]).to.deep.equal([true, false]);
  });
});

describe('azure refused listings (MountReads)', () => {
  const OBJECT = { objectType: 'secret', objectName: 'db' } as KeyVaultObject;
  const logger = createLogger({ component: 'test', silent: true });

  /** A Mount's reads on a test clock, with a reader whose listing Key Vault refuses (403). */
  function reads() {
    let t = 1_700_000_000_000;
    const clock = { now: () => t, sleep: async () => undefined };
    const listings = { n: 0 };
    const reader = {
      listVersions: async () => {
        listings.n++;
        throw Object.assign(new Error('Forbidden'), { statusCode: 403, code: 'Forbidden' });
      },
    } as unknown as KeyVaultReader;
    // A read window of 0: every listing reaches the reader unless a refusal is remembered.
    const cache = new ReadCache<Read>({ windowMs: 0, weigh: () => 1 });
    const shared = { cache, clock, listRefusals: listRefusalMemory(clock, 10) };
    const where = { keyvaultName: 'kv', identityKind: 'service principal' } as const;
    const mount = new MountReads(shared, reader, 'alice', where, undefined, logger);
    return {
      lister: mount.lister(new AbortController().signal),
      listings,
      advance: (ms: number) => {
        t += ms;
      },
    };
  }

  it('does not ask again for LIST_REFUSAL_MS once Key Vault refused a listing, and asks again after', async () => {
    const { lister, listings, advance } = reads();
    expect(await lister.forLatest(OBJECT)).to.equal(undefined);
    advance(LIST_REFUSAL_MS - 1);
    expect(await lister.forLatest(OBJECT)).to.equal(undefined);
    expect(listings.n).to.equal(1);
    advance(1);
    expect(await lister.forLatest(OBJECT)).to.equal(undefined);
    expect(listings.n).to.equal(2);
  });
});
