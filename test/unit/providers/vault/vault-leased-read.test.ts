import { expect } from 'chai';
import { inspect } from 'node:util';
import { leaseEnd } from '../../../../providers/vault/lease-policy.js';
import { LeaseStore } from '../../../../providers/vault/lease-store.js';
import { readWithLease, type LeasedRead, type LeasedReadPorts } from '../../../../providers/vault/leased-read.js';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';

const SECRET = 'pw-Zq9-never-print';
const ALICE = '{"serviceAccount":"ns/alice"}';
const HOUR = 3_600_000;
const [USER, PASS] = parseObjects(`
- {objectName: user, secretPath: database/creds/app, secretKey: username}
- {objectName: pass, secretPath: database/creds/app, secretKey: password}
`).objects as [VaultObject, VaultObject];

/**
 * Vault as far as one role's leases go: each fetch issues a lease of `ttlMs` (capped at
 * `maxTtlMs` from its issue); renew grants the TTL again within that cap, or fails.
 */
function vault(
  now: () => number,
  options: { ttlMs?: number; maxTtlMs?: number; renewable?: boolean; renewFails?: boolean } = {},
) {
  const ttlMs = options.ttlMs ?? HOUR;
  const maxTtlMs = options.maxTtlMs ?? 3 * HOUR;
  const issuedAt = new Map<string, number>();
  const calls = { fetch: 0, renew: [] as unknown[] };
  const ports: LeasedReadPorts = {
    async fetch() {
      calls.fetch++;
      const leaseId = `database/creds/app/${calls.fetch}`;
      issuedAt.set(leaseId, now());
      return {
        data: { username: `v-${calls.fetch}`, password: SECRET },
        body: { lease_id: leaseId, lease_duration: ttlMs / 1000, renewable: options.renewable ?? true },
      };
    },
    async renew(request) {
      calls.renew.push(request);
      if (options.renewFails) throw new Error('permission denied on sys/leases/renew');
      const start = issuedAt.get(request.body.lease_id) as number;
      const granted = Math.min(request.body.increment * 1000, start + maxTtlMs - now());
      return {
        lease_id: request.body.lease_id,
        lease_duration: Math.max(0, Math.floor(granted / 1000)),
        renewable: true,
      };
    },
  };
  return { ports, calls };
}

/** The versions a Mount of `read` returns (a stand-in for render.ts: one per lease and object). */
function versions(read: LeasedRead): Map<string, string> {
  return new Map([USER, PASS].map((o) => [o.objectName, `${o.objectName}@${String(read.data['username'])}`]));
}

/** A pod on one node: Mounts at rotation polls, holding what each returned as a driver would. */
function pod(store: LeaseStore, now: () => number, ports: LeasedReadPorts) {
  let mountedVersions = new Map<string, string>();
  return async (): Promise<LeasedRead> => {
    const read = await readWithLease(
      {
        store,
        identityKey: ALICE,
        tokenExpiresAtMs: undefined,
        now,
        mounted: [USER, PASS].map((object) => ({ object, version: mountedVersions.get(object.objectName) })),
      },
      ports,
    );
    mountedVersions = versions(read);
    if (read.lease)
      store.hold(
        ALICE,
        [USER, PASS].map((object) => ({ object, version: mountedVersions.get(object.objectName) as string })),
        read.lease.leaseId,
        read.lease.lease,
        read.data,
      );
    return read;
  };
}

function setup(options: Parameters<typeof vault>[1] = {}) {
  let t = 1_700_000_000_000;
  const now = () => t;
  const store = new LeaseStore({ now });
  const { ports, calls } = vault(now, options);
  return {
    store,
    ports,
    calls,
    mount: pod(store, now, ports),
    advance: (ms: number) => {
      t += ms;
    },
    now,
  };
}

describe('vault readWithLease', () => {
  it('issues at the first Mount and reuses the lease while more than a third of its TTL is left', async () => {
    const { mount, calls, advance } = setup();
    const first = await mount();
    expect([first.outcome, first.data['username']]).to.deep.equal(['fetched', 'v-1']);
    advance((2 * HOUR) / 3 - 1);
    const again = await mount();
    expect([again.outcome, again.data['username'], calls.fetch, calls.renew.length]).to.deep.equal([
      'reused',
      'v-1',
      1,
      0,
    ]);
  });

  it('renews a renewable lease in its last third, asking for the TTL again', async () => {
    const { mount, calls, advance, store } = setup();
    await mount();
    advance((2 * HOUR) / 3);
    const renewed = await mount();
    expect([renewed.outcome, renewed.data['username'], calls.fetch]).to.deep.equal(['renewed', 'v-1', 1]);
    expect(calls.renew).to.deep.equal([
      { path: 'sys/leases/renew', body: { lease_id: 'database/creds/app/1', increment: 3600 } },
    ]);
    advance(HOUR / 2); // past the lease's first end: the renewal was recorded
    expect((await mount()).outcome).to.equal('reused');
    expect(store.size).to.equal(1);
  });

  it('records a renewal in the store even when that Mount fails afterwards (nothing held again)', async () => {
    const { mount, calls, advance, store, ports, now } = setup();
    const first = await mount();
    const mounted = [USER, PASS].map((object) => ({ object, version: versions(first).get(object.objectName) }));
    advance((2 * HOUR) / 3);
    expect(
      (await readWithLease({ store, identityKey: ALICE, tokenExpiresAtMs: undefined, now, mounted }, ports)).outcome,
    ).to.equal('renewed');
    advance(HOUR / 2); // past the first end of the lease
    expect(
      (await readWithLease({ store, identityKey: ALICE, tokenExpiresAtMs: undefined, now, mounted }, ports)).outcome,
    ).to.equal('reused');
    expect(calls.fetch).to.equal(1);
  });

  it('re-issues when the renewal fails, forgets the former lease and says why', async () => {
    const { mount, calls, advance, store } = setup({ renewFails: true });
    await mount();
    advance((2 * HOUR) / 3);
    const read = await mount();
    expect([read.outcome, read.data['username'], calls.fetch, calls.renew.length]).to.deep.equal([
      'fetched',
      'v-2',
      2,
      1,
    ]);
    expect((read.renewFailure as Error).message).to.equal('permission denied on sys/leases/renew');
    expect(store.size).to.equal(1);
  });

  it('re-issues a lease that is not renewable in its last third, without trying to renew', async () => {
    const { mount, calls, advance } = setup({ renewable: false });
    await mount();
    advance((2 * HOUR) / 3);
    expect((await mount()).outcome).to.equal('fetched');
    expect([calls.fetch, calls.renew.length]).to.deep.equal([2, 0]);
  });

  it('re-issues when the renewal is capped near the max TTL', async () => {
    const { mount, calls, advance } = setup({ maxTtlMs: HOUR + HOUR / 4 });
    await mount();
    advance((2 * HOUR) / 3 + 60_000); // the max TTL leaves 34 min: more than a third (20 min), renewed
    expect((await mount()).outcome).to.equal('renewed');
    advance(20 * 60_000); // 14 min left, the max TTL allows no more
    const read = await mount();
    expect([read.outcome, calls.fetch, calls.renew.length]).to.deep.equal(['fetched', 2, 2]);
    expect(read.renewFailure).to.match(/no more than a third of the TTL/);
  });

  it('re-issues when the driver has another version mounted, and when the provider holds nothing (restart)', async () => {
    const { mount, calls, store, ports, now } = setup();
    await mount();
    const other = await readWithLease(
      {
        store,
        identityKey: ALICE,
        tokenExpiresAtMs: undefined,
        now,
        mounted: [
          { object: USER, version: 'user@v-1' },
          { object: PASS, version: 'pass@v-9' },
        ],
      },
      ports,
    );
    expect(other.outcome).to.equal('fetched');
    const restarted = await readWithLease(
      {
        store: new LeaseStore({ now }),
        identityKey: ALICE,
        tokenExpiresAtMs: undefined,
        now,
        mounted: [
          { object: USER, version: 'user@v-1' },
          { object: PASS, version: 'pass@v-1' },
        ],
      },
      ports,
    );
    expect([restarted.outcome, calls.fetch]).to.deep.equal(['fetched', 3]);
  });

  it('returns no lease for a response without one (KV), so nothing is held', async () => {
    const { store, now } = setup();
    const read = await readWithLease(
      { store, identityKey: ALICE, tokenExpiresAtMs: undefined, now, mounted: [{ object: USER, version: undefined }] },
      {
        fetch: async () => ({
          data: { username: 'u' },
          body: { lease_id: '', lease_duration: 2_764_800, data: { username: 'u' } },
        }),
        renew: async () => {
          throw new Error('not called');
        },
      },
    );
    expect([read.outcome, read.lease]).to.deep.equal(['fetched', undefined]);
  });

  it('keeps the mounted lease valid at every rotation poll over a day, with few issues', async () => {
    const { mount, calls, advance, now, store } = setup({ maxTtlMs: 3 * HOUR });
    const outcomes: Record<string, number> = { fetched: 0, renewed: 0, reused: 0 };
    for (let poll = 0; poll < 24 * 30; poll++) {
      const read = await mount();
      outcomes[read.outcome] = (outcomes[read.outcome] ?? 0) + 1;
      expect(read.lease && leaseEnd(read.lease.lease) - now()).to.be.greaterThan(HOUR / 3);
      advance(2 * 60_000);
    }
    // A lease lives 160 of its 180 min max TTL (issued, renewed at 40, 80 and 120 min,
    // re-issued at 160 when a renewal would grant only 20 min): 9 issues a day, not 720.
    expect(calls.fetch).to.equal(9);
    expect(outcomes['renewed']).to.equal(27);
    expect(store.size).to.equal(1);
  });

  it("a lease issued ends no later than the token that sent the fetch (the fetch's expiry wins over the call's)", async () => {
    const { store, now, ports } = setup();
    const fetchToken = now() + 30 * 60_000;
    const read = await readWithLease(
      {
        store,
        identityKey: ALICE,
        tokenExpiresAtMs: now() + 2 * HOUR,
        now,
        mounted: [{ object: USER, version: undefined }],
      },
      {
        ...ports,
        fetch: async () => ({ ...(await ports.fetch()), tokenExpiresAtMs: fetchToken }),
      },
    );
    expect(read.lease?.lease.tokenExpiresAtMs).to.equal(fetchToken);
    const fromCall = await readWithLease(
      {
        store,
        identityKey: ALICE,
        tokenExpiresAtMs: now() + 2 * HOUR,
        now,
        mounted: [{ object: USER, version: undefined }],
      },
      ports,
    );
    expect(fromCall.lease?.lease.tokenExpiresAtMs).to.equal(now() + 2 * HOUR);
  });

  it('does not show the data when the answer is logged', async () => {
    const { mount } = setup();
    const read = await mount();
    expect(JSON.stringify(read)).to.not.include(SECRET);
    expect(inspect(read, { depth: 9 })).to.not.include(SECRET);
    expect(read.data['password']).to.equal(SECRET);
  });
});
