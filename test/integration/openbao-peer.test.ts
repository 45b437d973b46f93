import { expect } from 'chai';
import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { postgresUnavailable, startPostgres, type Postgres } from '../support/postgres.js';

// The OpenBao and Postgres test peers (test/peers/install.sh openbao postgres) do what the
// vault provider's tests will rely on: KV v2 and v1, JWT login with a token signed here,
// renewable leases from the database engine against a real Postgres, namespaces, and a
// TLS listener with a client-certificate requirement.

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** An RS256 JWT over `claims`, as a Kubernetes service-account token would be signed. */
function signJwt(privateKeyPem: string, claims: Record<string, unknown>): string {
  const input = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'test' }))}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKeyPem).toString('base64url')}`;
}

/** GET over HTTPS with a CA and optional client certificate: the status code, or the TLS error's message. */
async function httpsStatus(
  url: string,
  tls: { ca?: string; cert?: Buffer; key?: Buffer; servername?: string },
): Promise<number | string> {
  return await new Promise((resolve) => {
    const req = request(url, { ...tls, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err) => resolve(err.message));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('OpenBao test peer (real bao server -dev)', function () {
  this.timeout(120_000);
  let bao: OpenBao;

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the OpenBao peer tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao({ tls: { requireClientCert: true } });
  });
  after(async () => {
    await bao?.stop();
  });

  it('KV v2 at secret/ (dev mode): write, then read the data and its version', async () => {
    await bao.write('secret/data/app/db', { data: { password: 's3cret', port: 5432 } });
    const read = await bao.read('secret/data/app/db');
    expect(read?.data).to.deep.include({ data: { password: 's3cret', port: 5432 } });
    expect((read?.data?.['metadata'] as { version: number }).version).to.equal(1);
    expect(await bao.read('secret/data/app/absent')).to.equal(undefined);
  });

  it('KV v1 mounted at kv1/: a read has no lease, though it reports a 32-day lease_duration', async () => {
    await bao.enableSecretsEngine('kv1', 'kv', { version: '1' });
    await bao.write('kv1/app/api', { token: 't0ken' });
    const read = await bao.read('kv1/app/api');
    expect(read?.data).to.deep.equal({ token: 't0ken' });
    expect(read?.lease_id).to.equal('');
    expect(read?.lease_duration).to.equal(32 * 24 * 3600);
  });

  it('jwt auth with a test RSA key: a JWT for audience "vault" logs in, one for another audience does not', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await bao.enableAuth('jwt', 'jwt');
    await bao.write('auth/jwt/config', {
      jwt_validation_pubkeys: [publicKey],
      bound_issuer: 'https://kubernetes.default.svc',
    });
    await bao.putPolicy('app-reader', 'path "secret/data/app/*" { capabilities = ["read"] }');
    await bao.write('auth/jwt/role/app', {
      role_type: 'jwt',
      bound_audiences: ['vault'],
      user_claim: 'sub',
      policies: ['app-reader'],
      token_ttl: '10m',
    });
    await bao.write('secret/data/app/config', { data: { mode: 'prod' } });
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      iss: 'https://kubernetes.default.svc',
      sub: 'system:serviceaccount:default:app',
      iat: now,
      nbf: now,
      exp: now + 600,
    };

    const login = await bao.request('POST', 'auth/jwt/login', {
      token: '',
      body: { role: 'app', jwt: signJwt(privateKey, { ...claims, aud: ['vault'] }) },
    });
    const clientToken = login?.auth?.client_token ?? '';
    expect(clientToken).to.match(/^s\./);
    expect(login?.auth?.policies).to.include('app-reader');
    const read = await bao.request('GET', 'secret/data/app/config', { token: clientToken });
    expect(read?.data?.['data']).to.deep.equal({ mode: 'prod' });

    const refused = await bao
      .request('POST', 'auth/jwt/login', {
        token: '',
        body: { role: 'app', jwt: signJwt(privateKey, { ...claims, aud: ['other'] }) },
      })
      .then(
        () => 'logged in',
        (err: Error) => err.message,
      );
    expect(refused).to.match(/HTTP 400.*audience/);
  });

  it('namespaces: a child namespace has its own mounts', async () => {
    const team = await bao.createNamespace(`team-${randomBytes(3).toString('hex')}`);
    await team.enableSecretsEngine('kv', 'kv', { version: '2' });
    await team.write('kv/data/x', { data: { a: 'b' } });
    expect((await team.read('kv/data/x'))?.data?.['data']).to.deep.equal({ a: 'b' });
    expect(await bao.read('kv/data/x')).to.equal(undefined);
    expect((await bao.read(`${team.namespace}/kv/data/x`))?.data?.['data']).to.deep.equal({ a: 'b' });
  });

  it('the TLS listener verifies against the test CA, by IP or server name, and requires a client certificate', async () => {
    const tls = bao.tls;
    if (!tls) throw new Error('started without TLS');
    expect(tls.requireClientCert).to.equal(true);
    const url = `${tls.address}/v1/sys/health`;
    const [cert, key] = [await readFile(tls.clientCertPath), await readFile(tls.clientKeyPath)];
    expect(await httpsStatus(url, { ca: tls.caCertPem, cert, key })).to.equal(200);
    expect(await httpsStatus(url, { ca: tls.caCertPem, cert, key, servername: tls.serverName })).to.equal(200);
    expect(await httpsStatus(url, { ca: tls.caCertPem, cert, key, servername: 'other.test' })).to.match(
      /does not match certificate's altnames/,
    );
    expect(await httpsStatus(url, { ca: tls.caCertPem })).to.match(/alert certificate required/);
    expect(await httpsStatus(url, { cert, key })).to.match(/unable to verify/); // the test CA is in no default trust store
  });

  it('a TLS listener without the client-certificate requirement (tls: true) serves any client that trusts the CA', async () => {
    const plain = await startOpenBao({ tls: true });
    try {
      expect(plain.tls?.requireClientCert).to.equal(false);
      expect(await httpsStatus(`${plain.tls?.address}/v1/sys/health`, { ca: plain.tls?.caCertPem })).to.equal(200);
    } finally {
      await plain.stop();
    }
  });

  describe('with Postgres behind the database secrets engine', function () {
    let pg: Postgres;
    before(async function () {
      const unavailable = postgresUnavailable();
      if (unavailable) {
        process.stderr.write(`    skipping the database lease test: ${unavailable}\n`);
        this.skip();
      }
      pg = await startPostgres();
    });
    after(async () => {
      await pg?.stop();
    });

    it('issues a renewable lease for a real Postgres role, renews it, and revokes it (the role is dropped)', async () => {
      await bao.enableSecretsEngine('database', 'database');
      await bao.write('database/config/pg', {
        plugin_name: 'postgresql-database-plugin',
        allowed_roles: ['app'],
        verify_connection: true,
        connection_url: `postgresql://{{username}}:{{password}}@127.0.0.1:${pg.port}/${pg.database}?sslmode=disable`,
        username: pg.user,
        password: pg.password,
      });
      await bao.write('database/roles/app', {
        db_name: 'pg',
        default_ttl: '1h',
        max_ttl: '24h',
        creation_statements: [
          "CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';",
        ],
      });
      const creds = await bao.read('database/creds/app');
      expect(creds?.lease_id).to.match(/^database\/creds\/app\/.+/);
      expect(creds?.renewable).to.equal(true);
      expect(creds?.lease_duration).to.equal(3600);
      const username = String(creds?.data?.['username']);
      expect(
        await pg.query(`SELECT count(*) FROM pg_roles WHERE rolname = '${username.replace(/'/g, "''")}'`),
      ).to.equal('1\n');

      const renewed = await bao.request('PUT', 'sys/leases/renew', {
        body: { lease_id: creds?.lease_id, increment: 7200 },
      });
      expect(renewed?.lease_id).to.equal(creds?.lease_id);
      expect(renewed?.renewable).to.equal(true);
      expect(renewed?.lease_duration).to.equal(7200);

      await bao.request('PUT', 'sys/leases/revoke', { body: { lease_id: creds?.lease_id } });
      expect(
        await pg.query(`SELECT count(*) FROM pg_roles WHERE rolname = '${username.replace(/'/g, "''")}'`),
      ).to.equal('0\n');
    });
  });
});
