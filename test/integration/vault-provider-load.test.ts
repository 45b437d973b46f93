import { expect } from 'chai';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { trafficOf, VaultAudit, type AuditedRequest } from '../support/vault-audit.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// Vault load with the real provider process against a real OpenBao:
// many pods of one workload (one service account, one class) mounting in the same round
// cost one login and one read per secret, not one per pod; two workloads never share a
// token or a read. Counted by OpenBao itself, from its file audit log.

const OBJECTS = `
- {objectName: user, secretPath: secret/app/db, secretKey: user}
- {objectName: password, secretPath: secret/app/db, secretKey: password}
- {objectName: api, secretPath: secret/app/api, secretKey: token}
`;
const PODS = 50;

describe('vault provider load: logins and reads shared by the pods of one identity (real OpenBao, audit log)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let jwt: JwtAuth;
  let audit: VaultAudit;
  let provider: VaultProviderProcess;

  function attrs(pod: string, serviceAccount: string, objects = OBJECTS): Record<string, string> {
    return {
      roleName: 'app',
      vaultAddress: bao.address,
      vaultAuthMountPath: jwt.mount,
      objects,
      ...podAttributes(pod, serviceAccount),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token(serviceAccount)),
    };
  }

  /** Mounts `count` pods of `serviceAccount` at once; resolves with each one's files as text. */
  async function round(count: number, serviceAccount: string, on = provider): Promise<string[][]> {
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        on.mount(attrs(`${serviceAccount.replace('/', '-')}-${i}`, serviceAccount)),
      ),
    );
    return results.map((r) => r.files.map((f) => f.contents.toString('utf8')));
  }

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault load tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao({ auditLog: true });
    audit = new VaultAudit(bao.auditLogPath as string);
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'] });
    await bao.write('secret/data/app/db', { data: { user: 'app', password: 's3cret' } });
    await bao.write('secret/data/app/api', { data: { token: 't0ken' } });
    // A window longer than the default 5s, so a slow machine cannot make the second round miss it.
    provider = await startVaultProvider(['--health-addr=127.0.0.1:0', '--read-cache-window=30s']);
  });
  after(async () => {
    await provider?.stop();
    await bao?.stop();
  });

  it(`${PODS} pods of one service account mounting at once: one login, one read per secret; a round within the window sends nothing`, async () => {
    const start = await audit.mark();
    const files = await round(PODS, 'default/app');
    for (const f of files) expect(f).to.deep.equal(['app', 's3cret', 't0ken']);
    const traffic = trafficOf(await audit.since(start), jwt.mount);
    expect(traffic.logins).to.equal(1);
    expect(Object.fromEntries(traffic.reads)).to.deep.equal({
      'read secret/data/app/db': 1,
      'read secret/data/app/api': 1,
    });
    // The KV version lookup is per identity and mount, and both reads may ask at once.
    expect(traffic.mountLookups).to.be.within(1, 2);

    const again = await audit.mark();
    expect(await round(PODS, 'default/app')).to.deep.equal(files);
    expect(await audit.since(again)).to.deep.equal([]);

    const metrics = await provider.metrics();
    expect(metrics.get('vault_login_total{result="success"}')).to.equal(1);
    expect(metrics.get('vault_read_cache_total{result="miss"}')).to.equal(2);
    // Every other read of the 2 × 2 × PODS was answered from a read in flight or the window.
    expect(
      (metrics.get('vault_read_cache_total{result="coalesced"}') ?? 0) +
        (metrics.get('vault_read_cache_total{result="hit"}') ?? 0),
    ).to.equal(4 * PODS - 2);
  });

  it("two service accounts at once: a login and reads each, every read with its own identity's token", async () => {
    const start = await audit.mark();
    await Promise.all([round(PODS / 2, 'default/alice'), round(PODS / 2, 'default/bob')]);
    const requests = await audit.since(start);
    const traffic = trafficOf(requests, jwt.mount);
    expect(traffic.logins).to.equal(2);
    expect(Object.fromEntries(traffic.reads)).to.deep.equal({
      'read secret/data/app/db': 2,
      'read secret/data/app/api': 2,
    });
    const reads = requests.filter((r) => r.path.startsWith('secret/data/'));
    const tokensOf = (who: string) =>
      new Set(
        reads
          .filter((r: AuditedRequest) => r.displayName === `jwt-system:serviceaccount:default:${who}`)
          .map((r) => r.clientToken),
      );
    const alice = tokensOf('alice');
    const bob = tokensOf('bob');
    expect([alice.size, bob.size]).to.deep.equal([1, 1]);
    expect([...alice][0]).to.not.equal([...bob][0]);
    for (const who of ['alice', 'bob']) {
      expect(
        reads
          .filter((r) => r.displayName.endsWith(`:${who}`))
          .map((r) => r.path)
          .sort(),
      ).to.deep.equal(['secret/data/app/api', 'secret/data/app/db']);
    }
  });

  it('a failed read is not cached: the next Mount within the window reads again and succeeds', async () => {
    const objects = '- {objectName: late, secretPath: secret/app/late, secretKey: v}\n';
    const start = await audit.mark();
    expect((await provider.mountError(attrs('late-0', 'default/app', objects))).code).to.equal('NOT_FOUND');
    await bao.write('secret/data/app/late', { data: { v: 'here' } });
    const res = await provider.mount(attrs('late-1', 'default/app', objects));
    expect(res.files[0]?.contents.toString()).to.equal('here');
    expect(trafficOf(await audit.since(start), jwt.mount).reads.get('read secret/data/app/late')).to.equal(2);
  });

  it('--read-cache-window=0: reads in flight are still shared, finished ones are not reused', async () => {
    const uncached = await startVaultProvider(['--read-cache-window=0']);
    try {
      const start = await audit.mark();
      await round(10, 'default/app', uncached);
      const first = trafficOf(await audit.since(start), jwt.mount);
      expect(first.logins).to.equal(1);
      // Ten Mounts at once: at most ten reads of each, and in practice far fewer.
      expect(first.reads.get('read secret/data/app/db')).to.be.within(1, 10);
      const next = await audit.mark();
      await round(1, 'default/app', uncached);
      expect(Object.fromEntries(trafficOf(await audit.since(next), jwt.mount).reads)).to.deep.equal({
        'read secret/data/app/db': 1,
        'read secret/data/app/api': 1,
      });
    } finally {
      await uncached.stop();
    }
  });
});
