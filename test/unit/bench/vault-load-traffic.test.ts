import { expect } from 'chai';
import { vaultLoadTraffic } from '../../../bench/vault-traffic.js';
import { vaultLoadTargets, type VaultLoadRow } from '../../../bench/vault-report.js';
import type { AuditedRequest } from '../../support/vault-audit.js';

describe("vaultLoadTraffic (the Vault-load benchmark's columns)", () => {
  const req = (operation: string, path: string, extra: Partial<AuditedRequest> = {}): AuditedRequest => ({
    path,
    operation,
    namespace: '',
    displayName: '',
    clientToken: '',
    error: '',
    ...extra,
  });

  const cases: [string, AuditedRequest, keyof ReturnType<typeof vaultLoadTraffic>][] = [
    ["a login at the class's mount", req('update', 'auth/kubernetes/login'), 'logins'],
    ['a login at another mount', req('update', 'auth/jwt/login'), 'other'],
    ['a KV v2 read', req('read', 'secret/data/bench/object-0'), 'reads'],
    ['a KV v1 read', req('read', 'kv1/conf'), 'reads'],
    ['a KV version probe', req('read', 'sys/internal/ui/mounts/secret/bench/object-0'), 'mountLookups'],
    ['a lease renewal', req('update', 'sys/leases/renew'), 'other'],
    ['a token lookup', req('read', 'auth/token/lookup-self'), 'other'],
    ['a dynamic secret (PUT)', req('update', 'pki/issue/web'), 'other'],
  ];
  for (const [what, request, column] of cases) {
    it(`${what} counts as ${column}`, () => {
      const t = vaultLoadTraffic([request], 'kubernetes');
      expect(t[column]).to.equal(1);
      expect(t.logins + t.reads + t.mountLookups + t.other).to.equal(1);
    });
  }

  it('totals, failures and the per-request counts (namespace-prefixed)', () => {
    const t = vaultLoadTraffic(
      [
        req('update', 'auth/kubernetes/login'),
        req('read', 'secret/data/a'),
        req('read', 'secret/data/a'),
        req('read', 'secret/data/b', { namespace: 'team', error: 'permission denied' }),
      ],
      'kubernetes',
    );
    expect(t).to.deep.equal({
      logins: 1,
      reads: 3,
      mountLookups: 0,
      other: 0,
      total: 4,
      failed: 1,
      byRequest: { 'read secret/data/a': 2, 'read team/secret/data/b': 1, 'update auth/kubernetes/login': 1 },
    });
  });
});

describe('vaultLoadTargets', () => {
  const row = (logins: number, reads: number, wallMs: number): VaultLoadRow => ({
    id: 'rotation-round',
    label: 'round',
    pods: 100,
    wallMs,
    driverCpuMs: 0,
    providerCpuMs: 0,
    providerRssMiB: 0,
    providerPeakMiB: 0,
    providerMountCalls: 100,
    naive: { logins: 100, reads: 500, total: 600 },
    vault: { logins, reads, mountLookups: 0, other: 0, total: logins + reads, failed: 0, byRequest: {} },
  });
  const cases: [string, VaultLoadRow, string, string][] = [
    ['one login, one read per object within a window', row(1, 5, 900), 'ok', 'ok'],
    ['no login (the token is still valid)', row(0, 5, 900), 'ok', 'ok'],
    ['a login per pod', row(100, 5, 900), 'MISSED', 'ok'],
    ['a read per pod and object', row(1, 500, 900), 'ok', 'MISSED'],
    ['two windows spanned allow two reads per object', row(1, 10, 5_001), 'ok', 'ok'],
    ['three reads per object within two windows', row(1, 15, 9_000), 'ok', 'MISSED'],
  ];
  for (const [what, r, logins, reads] of cases) {
    it(`${what}: logins ${logins}, reads ${reads}`, () => {
      const [l, rd] = vaultLoadTargets([r], 5, 5_000);
      expect([l?.status, rd?.status]).to.deep.equal([logins, reads]);
    });
  }
});
