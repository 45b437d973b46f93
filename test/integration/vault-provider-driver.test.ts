import { expect } from 'chai';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { postgresUnavailable, startPostgres, type Postgres } from '../support/postgres.js';
import {
  enableJwtAuth,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// The vault provider behind our real driver (local mode: classes from --spc-dir), with
// the SecretProviderClasses HashiCorp documents for its vault-csi-provider, rewritten
// here as YAML of ours with the same parameters: the "Hello World" class of its README
// and the classes of its documentation's tutorial and examples page. They mount
// unchanged, except the tutorial's vaultAddress, which names its in-cluster Service and
// is replaced by this test's OpenBao. Logins use a JWT auth method mounted at the default
// path `kubernetes`, with tokens signed by this test (standing in for kubelet's service
// account tokens; vault-provider-kubernetes.test.ts has real Kubernetes auth).

/** HashiCorp's README example ("Hello World"): two KV v2 keys, one with filePermission 0624. */
const README_HELLO_WORLD = `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: vault-kv
spec:
  provider: vault
  parameters:
    roleName: "kv-role"
    audience: "vault"
    objects: |
      - objectName: "secret-1"
        secretPath: "secret/data/kv1"
        secretKey: "bar1"
        filePermission: 0624
      - objectName: "secret-2"
        secretPath: "secret/data/kv2"
        secretKey: "bar2"
`;

/** HashiCorp's tutorial class: one KV v2 key; vaultAddress is set by the test. */
const tutorialClass = (address: string) => `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: vault-database
spec:
  provider: vault
  parameters:
    vaultAddress: "${address}"
    roleName: "database"
    objects: |
      - objectName: "db-password"
        secretPath: "secret/data/db-pass"
        secretKey: "password"
`;

/** HashiCorp's examples page: dynamic database credentials, username and password as two files. */
const DB_CREDS_EXAMPLE = `apiVersion: secrets-store.csi.x-k8s.io/v1alpha1
kind: SecretProviderClass
metadata:
  name: vault-db-creds
spec:
  provider: vault
  parameters:
    roleName: 'app'
    objects: |
      - objectName: "dbUsername"
        secretPath: "database/creds/db-app"
        secretKey: "username"
      - objectName: "dbPassword"
        secretPath: "database/creds/db-app"
        secretKey: "password"
`;

describe("vault provider behind the real driver (local mode) with HashiCorp's documented classes", function () {
  this.timeout(180_000);
  let bao: OpenBao;
  let jwt: JwtAuth;
  let stack: DriverStack;
  let provider: VaultProviderProcess;

  /** kubelet's NodePublishVolume for `pod` of class `spc`, with the pod's token for audience vault in the volume context. */
  function publishRequest(target: string, spc: string, pod: string) {
    const request = stack.request(target, spc, pod);
    return {
      ...request,
      volume_context: {
        ...request.volume_context,
        'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token('default/default')),
      },
    };
  }

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault provider driver tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao();
    await bao.putPolicy(
      'kv',
      'path "secret/data/kv1" { capabilities = ["read"] }\npath "secret/data/kv2" { capabilities = ["read"] }',
    );
    await bao.putPolicy('db-pass', 'path "secret/data/db-pass" { capabilities = ["read"] }');
    await bao.putPolicy('db-creds', 'path "database/creds/db-app" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'kubernetes', { 'kv-role': ['kv'], database: ['db-pass'], app: ['db-creds'] });
    await bao.write('secret/data/kv1', { data: { bar1: 'hello-1' } });
    await bao.write('secret/data/kv2', { data: { bar2: 'hello-2' } });
    await bao.write('secret/data/db-pass', { data: { password: 'db-secret-pass' } });
    stack = await startDriverStack({
      classes: {
        'vault-kv.yaml': README_HELLO_WORLD,
        'vault-database.yaml': tutorialClass(bao.address),
        'vault-db-creds.yaml': DB_CREDS_EXAMPLE,
      },
    });
    provider = await startVaultProvider([`--vault-addr=${bao.address}`], {}, { providersDir: stack.providersDir });
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
    await bao?.stop();
  });

  it('README "Hello World" (vault-kv): the files land with their contents and filePermission 0624', async () => {
    const target = stack.targetPath('hello');
    await stack.client.publish(publishRequest(target, 'vault-kv', 'hello'));
    expect(await readFile(join(target, 'secret-1'), 'utf8')).to.equal('hello-1');
    expect(await readFile(join(target, 'secret-2'), 'utf8')).to.equal('hello-2');
    expect((await stat(join(target, 'secret-1'))).mode & 0o777).to.equal(0o624);
    expect((await stat(join(target, 'secret-2'))).mode & 0o777).to.equal(0o644);
    const versions = JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as {
      objects: { id: string; version: string }[];
    };
    expect(versions.objects.map((o) => o.id)).to.deep.equal(['secret-1', 'secret-2']);
    await stack.client.unpublish('vol-hello', target);
  });

  it("the tutorial's vault-database class: db-password lands", async () => {
    const target = stack.targetPath('tutorial');
    await stack.client.publish(publishRequest(target, 'vault-database', 'tutorial'));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('db-secret-pass');
    await stack.client.unpublish('vol-tutorial', target);
  });

  describe("the examples page's dynamic database credentials (OpenBao database engine, real Postgres)", () => {
    let pg: Postgres;
    before(async function () {
      const missing = postgresUnavailable();
      if (missing) {
        process.stderr.write(`    skipping the database credentials example: ${missing}\n`);
        this.skip();
      }
      pg = await startPostgres();
      await bao.enableSecretsEngine('database', 'database');
      await bao.write('database/config/pg', {
        plugin_name: 'postgresql-database-plugin',
        allowed_roles: ['db-app'],
        verify_connection: true,
        connection_url: `postgresql://{{username}}:{{password}}@127.0.0.1:${pg.port}/${pg.database}?sslmode=disable`,
        username: pg.user,
        password: pg.password,
      });
      await bao.write('database/roles/db-app', {
        db_name: 'pg',
        default_ttl: '1h',
        max_ttl: '24h',
        creation_statements: [
          "CREATE ROLE \"{{name}}\" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';",
        ],
      });
    });
    after(async () => {
      await pg?.stop();
    });

    it('vault-db-creds: dbUsername and dbPassword land, a role Postgres knows', async () => {
      const target = stack.targetPath('db');
      await stack.client.publish(publishRequest(target, 'vault-db-creds', 'db'));
      const username = await readFile(join(target, 'dbUsername'), 'utf8');
      expect(username).to.match(/^v-/);
      expect((await readFile(join(target, 'dbPassword'), 'utf8')).length).to.be.greaterThan(8);
      expect(
        await pg.query(`SELECT count(*) FROM pg_roles WHERE rolname = '${username.replace(/'/g, "''")}'`),
      ).to.equal('1\n');
      await stack.client.unpublish('vol-db', target);
    });
  });
});
