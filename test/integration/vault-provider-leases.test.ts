import { expect } from 'chai';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { postgresUnavailable, startPostgres, type Postgres } from '../support/postgres.js';
import { until } from '../support/until.js';
import { trafficOf, VaultAudit } from '../support/vault-audit.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// Dynamic secrets with the real provider process against a real
// OpenBao: database credentials from the database engine on a real Postgres (renewable
// leases) and PKI certificates issued with generate_lease (not renewable). The driver's
// side is played by passing back, as current_object_version, the versions each Mount
// returned, as the driver does at every rotation poll. What OpenBao did is read from
// OpenBao itself: its lease list (sys/leases/lookup) and its file audit log. TTLs are
// seconds long so the thirds of a lease's life pass within the test; the test waits
// for points in time with deadlines, never for guessed durations.

/** A database role's leases: 9 s TTL, 14 s max TTL (renewed once at ~6 s, issued anew at ~11 s). */
const DB_TTL_S = 9;
const DB_MAX_TTL_S = 14;
/** A leased PKI certificate's TTL. */
const PKI_TTL_S = 6;

interface Mounted {
  readonly files: Record<string, string>;
  readonly versions: Record<string, string>;
}

describe('vault provider dynamic secrets: leases reused, renewed, issued anew (real OpenBao, real Postgres)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let pg: Postgres;
  let jwt: JwtAuth;
  let audit: VaultAudit;
  let provider: VaultProviderProcess;

  function attrs(objects: string): Record<string, string> {
    return {
      roleName: 'app',
      vaultAddress: bao.address,
      vaultAuthMountPath: jwt.mount,
      objects,
      ...podAttributes(),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token()),
    };
  }

  async function mountOf(
    objects: string,
    current: Record<string, string> = {},
    on: VaultProviderProcess = provider,
  ): Promise<Mounted> {
    const res = await on.mount(attrs(objects), { current });
    return {
      files: Object.fromEntries(res.files.map((f) => [f.path, f.contents.toString('utf8')])),
      versions: Object.fromEntries(res.object_version.map((v) => [v.id, v.version])),
    };
  }

  /** The ids of the leases OpenBao holds under `prefix` (e.g. database/creds/short). */
  async function leases(prefix: string): Promise<string[]> {
    const res = await bao.read(`sys/leases/lookup/${prefix}?list=true`);
    return ((res?.data?.['keys'] ?? []) as string[]).map((k) => `${prefix}/${k}`).sort();
  }

  async function lookup(leaseId: string): Promise<{ expireTime: number; lastRenewal: string | null }> {
    const res = await bao.request('PUT', 'sys/leases/lookup', { body: { lease_id: leaseId } });
    return {
      expireTime: Date.parse(res?.data?.['expire_time'] as string),
      lastRenewal: (res?.data?.['last_renewal'] as string | null) ?? null,
    };
  }

  before(async function () {
    const missing = openBaoUnavailable() ?? postgresUnavailable();
    if (missing) {
      process.stderr.write(`    skipping the vault lease tests: ${missing}\n`);
      this.skip();
    }
    bao = await startOpenBao({ auditLog: true });
    audit = new VaultAudit(bao.auditLogPath as string);
    pg = await startPostgres();
    await bao.enableSecretsEngine('database', 'database');
    await bao.write('database/config/pg', {
      plugin_name: 'postgresql-database-plugin',
      allowed_roles: ['short'],
      verify_connection: true,
      connection_url: `postgresql://{{username}}:{{password}}@127.0.0.1:${pg.port}/${pg.database}?sslmode=disable`,
      username: pg.user,
      password: pg.password,
    });
    await bao.write('database/roles/short', {
      db_name: 'pg',
      default_ttl: `${DB_TTL_S}s`,
      max_ttl: `${DB_MAX_TTL_S}s`,
      creation_statements: [
        "CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';",
      ],
    });
    await bao.enableSecretsEngine('pki', 'pki');
    await bao.write('pki/root/generate/internal', { common_name: 'test root', ttl: '24h' });
    await bao.write('pki/roles/leased', {
      allowed_domains: ['example.test'],
      allow_subdomains: true,
      max_ttl: '1h',
      generate_lease: true,
    });
    // No grant on sys/leases/renew here: the default policy, which jwt logins get, allows it.
    await bao.putPolicy(
      'app',
      'path "database/creds/short" { capabilities = ["read"] }\npath "pki/issue/leased" { capabilities = ["update"] }',
    );
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'] });
    provider = await startVaultProvider(['--health-addr=127.0.0.1:0']);
  });
  after(async () => {
    await provider?.stop();
    await bao?.stop();
    await pg?.stop();
  });

  it('database credentials (renewable): one issue for both files, reused, renewed in the last third, issued anew near the max TTL, and by a restarted provider', async () => {
    const objects =
      '- {objectName: username, secretPath: database/creds/short, secretKey: username}\n- {objectName: password, secretPath: database/creds/short, secretKey: password}\n';
    const start = await audit.mark();
    const first = await mountOf(objects);
    const issuedBy = Date.now();
    const username = first.files['username'] as string;
    expect(username).to.match(/^v-/);
    expect(await pg.query(`SELECT count(*) FROM pg_roles WHERE rolname = '${username.replace(/'/g, "''")}'`)).to.equal(
      '1\n',
    );
    const [lease] = await leases('database/creds/short');
    expect(await leases('database/creds/short')).to.have.length(1);
    // Both objects came from one response: one issue.
    expect(trafficOf(await audit.since(start), jwt.mount).reads.get('read database/creds/short')).to.equal(1);

    // Within the first two thirds: the same files and versions, nothing sent to Vault.
    const beforeReuse = await audit.mark();
    expect(await mountOf(objects, first.versions)).to.deep.equal(first);
    expect(await audit.since(beforeReuse)).to.deep.equal([]);
    expect(await leases('database/creds/short')).to.deep.equal([lease]);

    // In the last third: renewed, same files and versions, the lease's end moved in Vault.
    const issued = await lookup(lease as string);
    expect(issued.lastRenewal).to.equal(null);
    await until(
      "two thirds of the lease's TTL",
      async () => Date.now() >= issuedBy + (DB_TTL_S * 2000) / 3 + 200,
      30_000,
    );
    const beforeRenew = await audit.mark();
    expect(await mountOf(objects, first.versions)).to.deep.equal(first);
    const renewTraffic = trafficOf(await audit.since(beforeRenew), jwt.mount);
    expect([renewTraffic.renewals, renewTraffic.reads.size, renewTraffic.logins]).to.deep.equal([1, 0, 0]);
    const renewed = await lookup(lease as string);
    expect(renewed.lastRenewal).to.be.a('string');
    expect(renewed.expireTime).to.be.greaterThan(issued.expireTime);
    expect(await leases('database/creds/short')).to.deep.equal([lease]);

    // Polled as the driver's rotation does: the same credentials until Vault would grant no
    // more than a third of the TTL (the max TTL), then new ones while the old still work.
    const beforeReissue = await audit.mark();
    const polls: Mounted[] = [];
    const { value: reissued } = await until(
      'new credentials near the max TTL',
      async () => {
        const m = await mountOf(objects, first.versions);
        if (m.files['username'] !== username) return m;
        polls.push(m);
        return undefined;
      },
      30_000,
    );
    for (const m of polls) expect(m, 'the same files until then').to.deep.equal(first);
    expect(reissued.files['username']).to.match(/^v-/);
    expect(reissued.versions['username']).to.not.equal(first.versions['username']);
    expect(await leases('database/creds/short'), 'the old lease had not ended yet').to.include(lease);
    const reissueTraffic = trafficOf(await audit.since(beforeReissue), jwt.mount);
    expect(reissueTraffic.reads.get('read database/creds/short')).to.equal(1);
    expect(reissueTraffic.renewals, 'the renewal that Vault capped at the max TTL').to.be.at.least(1);

    // A provider that does not know the mounted lease (restarted) issues anew.
    const restarted = await startVaultProvider();
    try {
      const beforeRestart = await audit.mark();
      const fresh = await mountOf(objects, reissued.versions, restarted);
      expect(fresh.files['username']).to.not.equal(reissued.files['username']);
      expect(trafficOf(await audit.since(beforeRestart), jwt.mount).reads.get('read database/creds/short')).to.equal(1);
    } finally {
      await restarted.stop();
    }

    const metrics = await provider.metrics();
    expect(metrics.get('vault_lease_total{outcome="reused"}')).to.be.at.least(1);
    expect(metrics.get('vault_lease_total{outcome="renewed"}')).to.be.at.least(1);
    expect(metrics.get('vault_lease_total{outcome="fetched"}')).to.be.at.least(2);
    expect(metrics.get('vault_lease_dropped_total{reason="released"}')).to.be.at.least(1);
  });

  it('a leased GET is never shared: pods mounting database/creds at once get a credential each', async () => {
    const objects = '- {objectName: username, secretPath: database/creds/short, secretKey: username}\n';
    const mounts = await Promise.all(Array.from({ length: 5 }, () => mountOf(objects)));
    expect(new Set(mounts.map((m) => m.files['username'])).size).to.equal(5);
  });

  it('PKI with generate_lease (not renewable): certificate and key from one issue, reused, issued anew in the last third', async () => {
    const args = `{common_name: web.example.test, ttl: ${PKI_TTL_S}s}`;
    const objects =
      `- {objectName: tls.crt, secretPath: pki/issue/leased, method: PUT, secretKey: certificate, secretArgs: ${args}}\n` +
      `- {objectName: tls.key, secretPath: pki/issue/leased, method: PUT, secretKey: private_key, secretArgs: ${args}}\n`;
    const start = await audit.mark();
    const first = await mountOf(objects);
    const issuedBy = Date.now();
    const cert = new X509Certificate(first.files['tls.crt'] as string);
    // One issue: the key is the certificate's.
    expect(createPublicKey(first.files['tls.key'] as string).export({ format: 'jwk' })).to.deep.equal(
      cert.publicKey.export({ format: 'jwk' }),
    );
    expect(trafficOf(await audit.since(start), jwt.mount).reads.get('update pki/issue/leased')).to.equal(1);
    expect(await leases('pki/issue/leased')).to.have.length(1);

    const beforeReuse = await audit.mark();
    expect(await mountOf(objects, first.versions)).to.deep.equal(first);
    expect(await audit.since(beforeReuse)).to.deep.equal([]);

    await until(
      "two thirds of the certificate's lease",
      async () => Date.now() >= issuedBy + (PKI_TTL_S * 2000) / 3 + 200,
      30_000,
    );
    const beforeReissue = await audit.mark();
    const next = await mountOf(objects, first.versions);
    expect(new X509Certificate(next.files['tls.crt'] as string).serialNumber).to.not.equal(cert.serialNumber);
    expect(next.versions['tls.crt']).to.not.equal(first.versions['tls.crt']);
    const traffic = trafficOf(await audit.since(beforeReissue), jwt.mount);
    expect([traffic.reads.get('update pki/issue/leased'), traffic.renewals]).to.deep.equal([1, 0]);
  });

  it('PKI without generate_lease: no lease, so every Mount issues anew', async () => {
    await bao.write('pki/roles/plain', { allowed_domains: ['example.test'], allow_subdomains: true, max_ttl: '1h' });
    await bao.putPolicy(
      'app',
      'path "database/creds/short" { capabilities = ["read"] }\npath "pki/issue/leased" { capabilities = ["update"] }\npath "pki/issue/plain" { capabilities = ["update"] }',
    );
    const objects =
      '- {objectName: tls.crt, secretPath: pki/issue/plain, method: PUT, secretKey: certificate, secretArgs: {common_name: web.example.test}}\n';
    const first = await mountOf(objects);
    const second = await mountOf(objects, first.versions);
    expect(second.files['tls.crt']).to.not.equal(first.files['tls.crt']);
  });
});
