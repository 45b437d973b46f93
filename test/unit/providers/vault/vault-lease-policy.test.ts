import { expect } from 'chai';
import {
  issuedLease,
  leaseDecision,
  leaseEnd,
  leaseOf,
  renewOutcome,
  renewRequest,
  renewResultOf,
  type LeaseDecision,
  type MountedLease,
  type RenewResult,
} from '../../../../providers/vault/lease-policy.js';

const NOW = 1_700_000_000_000;
const TTL = 30 * 60_000;
const THIRD = TTL / 3;

/** A lease of TTL that ends `leftMs` after NOW. */
function lease(leftMs: number, renewable: boolean, tokenLeftMs?: number): MountedLease {
  return {
    expiresAtMs: NOW + leftMs,
    ttlMs: TTL,
    renewable,
    tokenExpiresAtMs: tokenLeftMs === undefined ? undefined : NOW + tokenLeftMs,
  };
}

describe('vault leaseOf', () => {
  const table: [string, unknown, ReturnType<typeof leaseOf>][] = [
    [
      'KV v1: a 32-day lease_duration without a lease_id is no lease',
      { lease_id: '', lease_duration: 2_764_800, renewable: false, data: { a: 'b' } },
      undefined,
    ],
    ['KV v2: no lease fields', { data: { data: { a: 'b' }, metadata: {} } }, undefined],
    ['a lease_id that is not a string is no lease', { lease_id: 42, lease_duration: 60 }, undefined],
    ['a body that is not an object', 'text', undefined],
    ['no body (204)', undefined, undefined],
    [
      'database credentials: renewable',
      { lease_id: 'database/creds/app/AbC', lease_duration: 3600, renewable: true },
      { leaseId: 'database/creds/app/AbC', durationMs: 3_600_000, renewable: true },
    ],
    [
      'a PKI lease: not renewable',
      { lease_id: 'pki/issue/web/x', lease_duration: 86_400, renewable: false },
      { leaseId: 'pki/issue/web/x', durationMs: 86_400_000, renewable: false },
    ],
    [
      'a lease without a usable duration has none',
      { lease_id: 'l', lease_duration: -5, renewable: 'yes' },
      { leaseId: 'l', durationMs: 0, renewable: false },
    ],
  ];
  for (const [name, body, expected] of table) it(name, () => expect(leaseOf(body)).to.deep.equal(expected));

  it('issuedLease counts the TTL from the issue and keeps the token expiry', () => {
    expect(issuedLease({ leaseId: 'l', durationMs: TTL, renewable: true }, NOW, NOW + 5)).to.deep.equal({
      expiresAtMs: NOW + TTL,
      ttlMs: TTL,
      renewable: true,
      tokenExpiresAtMs: NOW + 5,
    });
  });
});

describe('vault leaseDecision', () => {
  const table: [string, MountedLease | undefined, LeaseDecision][] = [
    ['unknown lease (provider restarted, evicted, other version): reissue', undefined, 'reissue'],
    ['fresh: reuse', lease(TTL, true), 'reuse'],
    ['fresh, not renewable: reuse', lease(TTL, false), 'reuse'],
    ['just over a third left: reuse', lease(THIRD + 1, false), 'reuse'],
    ['exactly a third left, renewable: renew', lease(THIRD, true), 'renew'],
    ['exactly a third left, not renewable: reissue', lease(THIRD, false), 'reissue'],
    ['1 ms left, renewable: renew', lease(1, true), 'renew'],
    ['ends now: reissue (an ended lease cannot be renewed)', lease(0, true), 'reissue'],
    ['ended: reissue', lease(-60_000, true), 'reissue'],
    ['no TTL: reissue', { expiresAtMs: NOW + TTL, ttlMs: 0, renewable: true }, 'reissue'],
    [
      'fresh lease, but its token ends within a third: renewing cannot help, reissue',
      lease(TTL, true, THIRD / 2),
      'reissue',
    ],
    ['fresh lease, token ends just after a third: reuse', lease(TTL, true, THIRD + 1), 'reuse'],
    ['last third, token outlives it: renew', lease(THIRD / 2, true, 2 * THIRD), 'renew'],
    ['last third, token ends within it: reissue', lease(THIRD / 2, true, THIRD), 'reissue'],
    ['token already expired: reissue', lease(TTL, true, -1), 'reissue'],
  ];
  for (const [name, mounted, expected] of table) it(name, () => expect(leaseDecision(mounted, NOW)).to.equal(expected));

  it('leaseEnd is the earlier of the lease and its token', () => {
    expect(leaseEnd(lease(TTL, true))).to.equal(NOW + TTL);
    expect(leaseEnd(lease(TTL, true, 10))).to.equal(NOW + 10);
    expect(leaseEnd(lease(10, true, TTL))).to.equal(NOW + 10);
  });
});

describe('vault renewOutcome', () => {
  const mounted = lease(THIRD / 2, true);
  const granted = (durationMs: number, renewable = true, leaseId = 'db/l1'): RenewResult => ({
    ok: true,
    leaseId,
    durationMs,
    renewable,
  });
  const table: [string, MountedLease, RenewResult, ReturnType<typeof renewOutcome>][] = [
    ['the renewal failed: reissue', mounted, { ok: false }, { decision: 'reissue' }],
    ['answered for another lease: reissue', mounted, granted(TTL, true, 'db/other'), { decision: 'reissue' }],
    [
      'full TTL granted: renewed from the time it was sent',
      mounted,
      granted(TTL),
      { decision: 'renewed', lease: { ...mounted, expiresAtMs: NOW + TTL } },
    ],
    ['capped near the max TTL to a third: reissue', mounted, granted(THIRD), { decision: 'reissue' }],
    [
      'capped but more than a third left: renewed',
      mounted,
      granted(THIRD + 1000),
      { decision: 'renewed', lease: { ...mounted, expiresAtMs: NOW + THIRD + 1000 } },
    ],
    ['zero granted: reissue', mounted, granted(0), { decision: 'reissue' }],
    [
      'renewed, but its token ends within a third: reissue',
      lease(THIRD / 2, true, THIRD),
      granted(TTL),
      { decision: 'reissue' },
    ],
    [
      'Vault says it is no longer renewable: kept as such',
      mounted,
      granted(TTL, false),
      { decision: 'renewed', lease: { ...mounted, expiresAtMs: NOW + TTL, renewable: false } },
    ],
  ];
  for (const [name, m, result, expected] of table)
    it(name, () => expect(renewOutcome(m, 'db/l1', result, NOW)).to.deep.equal(expected));

  it('keeps the TTL of the issue as the measure, so a capped renewal is caught at the next Mount', () => {
    const outcome = renewOutcome(mounted, 'db/l1', granted(THIRD * 2), NOW);
    expect(outcome.decision).to.equal('renewed');
    if (outcome.decision !== 'renewed') return;
    expect(outcome.lease.ttlMs).to.equal(TTL);
    expect(leaseDecision(outcome.lease, NOW + THIRD)).to.equal('renew');
    expect(leaseDecision(outcome.lease, NOW + THIRD - 1)).to.equal('reuse');
  });

  it('reads the answer of sys/leases/renew', () => {
    expect(renewResultOf({ lease_id: 'db/l1', lease_duration: 1800, renewable: true })).to.deep.equal(
      granted(1_800_000),
    );
    expect(renewResultOf({ errors: ['lease not found'] })).to.deep.equal({ ok: false });
    expect(renewResultOf(undefined)).to.deep.equal({ ok: false });
  });

  it('asks to renew for the original TTL, in whole seconds', () => {
    expect(renewRequest('db/l1', { ...mounted, ttlMs: 1500 })).to.deep.equal({
      path: 'sys/leases/renew',
      body: { lease_id: 'db/l1', increment: 2 },
    });
    expect(renewRequest('db/l1', mounted).body.increment).to.equal(1800);
  });
});
