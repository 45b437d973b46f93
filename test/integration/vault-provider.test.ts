import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// The real vault provider process against a real OpenBao (test/peers openbao), logging in
// with JWT auth: the JWTs are signed by this test with its own RSA key, standing in for
// the service-account tokens kubelet mints (Kubernetes auth against a real
// kube-apiserver: vault-provider-kubernetes.test.ts).

const text = (files: { path: string; contents: Buffer }[], path: string) =>
  files.find((f) => f.path === path)?.contents.toString('utf8');

describe('vault provider process against real OpenBao (jwt auth, KV, errors)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let jwt: JwtAuth;
  let provider: VaultProviderProcess;

  /** Attributes of a class logging in as `role` at the jwt mount, with `objects` (YAML). */
  function attrs(objects: string, extra: Record<string, string> = {}, role = 'app'): Record<string, string> {
    return {
      roleName: role,
      vaultAddress: bao.address,
      vaultAuthMountPath: jwt.mount,
      objects,
      ...podAttributes(),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token()),
      ...extra,
    };
  }

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault provider tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao();
    await bao.enableSecretsEngine('kv1', 'kv', { version: '1' });
    await bao.putPolicy(
      'app',
      ['secret/data/app/*', 'secret/metadata/app/*', 'kv1/app/*']
        .map((p) => `path "${p}" { capabilities = ["read"] }`)
        .join('\n') + '\npath "pki/issue/web" { capabilities = ["update"] }',
    );
    await bao.putPolicy('nothing', 'path "secret/data/other/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'], outsider: ['nothing'] });
    await bao.write('secret/data/app/db', {
      data: { password: 's3cret', user: 'app', port: 5432, tags: { b: 1, a: [true, null] } },
    });
    await bao.write('kv1/app/api', { token: 't0ken' });
    provider = await startVaultProvider();
  });
  after(async () => {
    await provider?.stop();
    await bao?.stop();
  });

  it('KV v2: secret/app/db and secret/data/app/db read the same secret; secretKey picks a key; non-strings are JSON', async () => {
    const res = await provider.mount(
      attrs(`
- objectName: short
  secretPath: secret/app/db
  secretKey: password
- objectName: long
  secretPath: secret/data/app/db
  secretKey: password
- objectName: v1/prefixed
  secretPath: /v1/secret/data/app/db
  secretKey: port
- objectName: tags.json
  secretPath: secret/app/db
  secretKey: tags
`),
    );
    expect(res.files.map((f) => [f.path, f.contents.toString(), f.mode])).to.deep.equal([
      ['short', 's3cret', 420],
      ['long', 's3cret', 420],
      ['v1/prefixed', '5432', 420],
      ['tags.json', '{"a":[true,null],"b":1}', 420],
    ]);
    expect(res.object_version.map((v) => v.id)).to.deep.equal(['short', 'long', 'v1/prefixed', 'tags.json']);
    for (const v of res.object_version) expect(v.version).to.match(/^[0-9a-f]{64}$/);
  });

  it('KV v2 whole secret: the data alone as JSON with sorted keys; the same content keeps the same version', async () => {
    const objects = '- objectName: db.json\n  secretPath: secret/app/db\n';
    const first = await provider.mount(attrs(objects));
    expect(text(first.files, 'db.json')).to.equal(
      '{"password":"s3cret","port":5432,"tags":{"a":[true,null],"b":1},"user":"app"}',
    );
    const second = await provider.mount(attrs(objects));
    expect(second.object_version).to.deep.equal(first.object_version);
  });

  it('KV v2 ?version=N reads that version (both spellings); the latest moves on', async () => {
    await bao.write('secret/data/app/rotating', { data: { v: 'one' } });
    await bao.write('secret/data/app/rotating', { data: { v: 'two' } });
    const res = await provider.mount(
      attrs(`
- {objectName: latest, secretPath: secret/app/rotating, secretKey: v}
- {objectName: first, secretPath: "secret/app/rotating?version=1", secretKey: v}
- {objectName: first-long, secretPath: "secret/data/app/rotating?version=1", secretKey: v}
`),
    );
    expect(res.files.map((f) => f.contents.toString())).to.deep.equal(['two', 'one', 'one']);
  });

  it('KV v1: read as written; no lease although Vault reports a 32-day lease_duration', async () => {
    const res = await provider.mount(
      attrs(
        '- {objectName: api, secretPath: kv1/app/api, secretKey: token}\n- {objectName: all, secretPath: kv1/app/api}\n',
      ),
    );
    expect(res.files.map((f) => f.contents.toString())).to.deep.equal(['t0ken', '{"token":"t0ken"}']);
  });

  it('a role whose policies do not allow the path: PERMISSION_DENIED naming the path and the role, no secret', async () => {
    const failure = await provider.mountError(
      attrs('- {objectName: db, secretPath: secret/app/db, secretKey: password}\n', {}, 'outsider'),
    );
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details)
      .to.include('object "db" (secretPath "secret/app/db")')
      .and.include('role "outsider"')
      .and.include('"secret/app/db"')
      .and.not.include('s3cret');
  });

  it('two identities on one Vault never share a token: the one without rights stays denied between reads of the other', async () => {
    const objects = '- {objectName: p, secretPath: secret/app/db, secretKey: password}\n';
    for (let round = 0; round < 2; round++) {
      expect(text((await provider.mount(attrs(objects))).files, 'p')).to.equal('s3cret');
      expect((await provider.mountError(attrs(objects, {}, 'outsider'))).code).to.equal('PERMISSION_DENIED');
    }
  });

  it('a missing path and a missing key: NOT_FOUND naming them', async () => {
    const missing = await provider.mountError(attrs('- {objectName: x, secretPath: secret/app/absent}\n'));
    expect(missing.code).to.equal('NOT_FOUND');
    expect(missing.details).to.match(
      /secret "secret\/data\/app\/absent" not found in Vault at http:\/\/127\.0\.0\.1:\d+/,
    );
    const key = await provider.mountError(attrs('- {objectName: x, secretPath: secret/app/db, secretKey: passwd}\n'));
    expect(key.code).to.equal('NOT_FOUND');
    expect(key.details).to.include('has no key "passwd"').and.not.include('s3cret');
  });

  it('all or nothing: one failing object fails the whole Mount', async () => {
    const failure = await provider.mountError(
      attrs('- {objectName: good, secretPath: secret/app/db}\n- {objectName: bad, secretPath: kv1/app/absent}\n'),
    );
    expect(failure.code).to.equal('NOT_FOUND');
    expect(failure.details).to.include('object "bad"');
  });

  it('a soft-deleted and a destroyed KV v2 version: NOT_FOUND naming the path and version', async () => {
    await bao.write('secret/data/app/gone', { data: { v: 'one' } });
    await bao.write('secret/data/app/gone', { data: { v: 'two' } });
    await bao.write('secret/delete/app/gone', { versions: [2] });
    await bao.write('secret/destroy/app/gone', { versions: [1] });
    const deleted = await provider.mountError(attrs('- {objectName: x, secretPath: secret/app/gone, secretKey: v}\n'));
    expect(deleted.code).to.equal('NOT_FOUND');
    expect(deleted.details).to.include('secret "secret/app/gone" was deleted');
    const destroyed = await provider.mountError(
      attrs('- {objectName: x, secretPath: "secret/data/app/gone?version=1", secretKey: v}\n'),
    );
    expect(destroyed.code).to.equal('NOT_FOUND');
    expect(destroyed.details).to.include('secret "secret/data/app/gone?version=1" version 1 was destroyed');
  });

  it("no token for the class's audience: FAILED_PRECONDITION naming the audience and the CSIDriver's tokenRequests", async () => {
    const failure = await provider.mountError(
      attrs('- {objectName: x, secretPath: secret/app/db}\n', { audience: 'bao' }),
    );
    expect(failure.code).to.equal('FAILED_PRECONDITION');
    expect(failure.details)
      .to.include('no service-account token for audience "bao"')
      .and.include('only "vault"')
      .and.include('tokenRequests');
  });

  it('a token the role refuses (wrong audience): PERMISSION_DENIED naming the login path and role, not the token', async () => {
    const token = jwt.token('default/other-sa', 'other');
    const failure = await provider.mountError(
      attrs('- {objectName: x, secretPath: secret/app/db}\n', {
        ...podAttributes('web-1', 'default/other-sa'),
        'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(token),
      }),
    );
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details)
      .to.include('refused the login at "auth/jwt/login" as role "app" (HTTP 400)')
      .and.include('aud')
      .and.not.include(token.split('.')[2] as string);
  });

  it('a revoked Vault token: the provider logs in again once and the Mount succeeds', async () => {
    await bao.write('secret/data/app/after-revoke', { data: { v: 'fresh' } });
    await provider.mount(attrs('- {objectName: p, secretPath: secret/app/db, secretKey: password}\n'));
    await bao.request('PUT', 'sys/leases/revoke-prefix/auth/jwt/login', { body: {} });
    // Another path: one just read would come from the read cache, without asking Vault.
    const res = await provider.mount(attrs('- {objectName: v, secretPath: secret/app/after-revoke, secretKey: v}\n'));
    expect(text(res.files, 'v')).to.equal('fresh');
  });

  it('method PUT/POST with secretArgs issues from PKI', async () => {
    await bao.enableSecretsEngine('pki', 'pki');
    await bao.write('pki/root/generate/internal', { common_name: 'test root', ttl: '24h' });
    await bao.write('pki/roles/web', { allowed_domains: ['example.test'], allow_subdomains: true, max_ttl: '1h' });
    const res = await provider.mount(
      attrs(`
- {objectName: tls.crt, secretPath: pki/issue/web, method: PUT, secretKey: certificate, secretArgs: {common_name: a.example.test}}
- {objectName: tls.key, secretPath: pki/issue/web, method: post, secretKey: private_key, filePermission: 0600, secretArgs: {common_name: b.example.test, ttl: 10m}}
`),
    );
    expect(text(res.files, 'tls.crt')).to.match(/^-----BEGIN CERTIFICATE-----/);
    expect(text(res.files, 'tls.key')).to.match(/^-----BEGIN (RSA |EC )?PRIVATE KEY-----/);
    expect(res.files.find((f) => f.path === 'tls.key')?.mode).to.equal(0o600);
    const refused = await provider.mountError(
      attrs('- {objectName: c, secretPath: pki/issue/web, method: PUT, secretArgs: {common_name: evil.test}}\n'),
    );
    expect(refused.code).to.equal('INVALID_ARGUMENT');
    expect(refused.details).to.include('bad request (HTTP 400)').and.include('evil.test');
  });

  it('namespaces: vaultNamespace logs in and reads inside the namespace', async () => {
    const team = await bao.createNamespace('team-a');
    await team.enableSecretsEngine('kv', 'kv', { version: '2' });
    await team.putPolicy('team', 'path "kv/data/*" { capabilities = ["read"] }');
    const teamJwt = await enableJwtAuth(team, 'jwt', { reader: ['team'] });
    await team.write('kv/data/conf', { data: { mode: 'team' } });
    const res = await provider.mount({
      ...attrs(
        '- {objectName: mode, secretPath: kv/conf, secretKey: mode}\n',
        {
          vaultNamespace: 'team-a',
          'csi.storage.k8s.io/serviceAccount.tokens': teamJwt.tokensAttribute(teamJwt.token()),
        },
        'reader',
      ),
    });
    expect(text(res.files, 'mode')).to.equal('team');
  });

  it('a bad parameter: INVALID_ARGUMENT naming it, before any Vault call', async () => {
    const failure = await provider.mountError(attrs('- {objectName: x, secretPath: secret/app/db, encoding: utf8}\n'));
    expect(failure.code).to.equal('INVALID_ARGUMENT');
    expect(failure.details).to.include('objects[0] ("x").encoding must be utf-8, base64 or hex');
  });

  describe('Vault unavailable', () => {
    let silent: Server;
    const held: Socket[] = [];
    before(async () => {
      // Accepts connections and never answers: a hung Vault.
      silent = createServer((socket) => {
        held.push(socket);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    after(async () => {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });

    it('an address nobody listens on: UNAVAILABLE naming the address', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const failure = await provider.mountError(
        attrs('- {objectName: x, secretPath: secret/app/db}\n', { vaultAddress: `http://127.0.0.1:${port}` }),
      );
      expect(failure.code).to.equal('UNAVAILABLE');
      expect(failure.details).to.equal(`vault provider: cannot reach Vault at http://127.0.0.1:${port} (ECONNREFUSED)`);
    });

    it("a Vault that never answers: DEADLINE_EXCEEDED before the Mount's deadline, not a hang", async () => {
      const port = (silent.address() as { port: number }).port;
      const started = Date.now();
      const failure = await provider.mountError(
        attrs('- {objectName: x, secretPath: secret/app/db}\n', { vaultAddress: `http://127.0.0.1:${port}` }),
        { deadlineMs: 3_000 },
      );
      expect(failure.code).to.equal('DEADLINE_EXCEEDED');
      expect(failure.details).to.match(/did not answer login "auth\/jwt\/login" within 2\d{3} ms/);
      expect(Date.now() - started).to.be.below(3_000);
    });

    it('a sealed OpenBao: UNAVAILABLE saying it is sealed', async () => {
      const other = await startOpenBao();
      try {
        await enableJwtAuth(other, 'jwt', { app: ['default'] });
        await other.request('PUT', 'sys/seal');
        const failure = await provider.mountError(
          attrs('- {objectName: x, secretPath: secret/app/db}\n', { vaultAddress: other.address }),
        );
        expect(failure.code).to.equal('UNAVAILABLE');
        expect(failure.details).to.include('is sealed or not ready (HTTP 503)');
      } finally {
        await other.stop();
      }
    });

    it('an OpenBao stopped between Mounts: UNAVAILABLE', async () => {
      const other = await startOpenBao();
      const otherJwt = await enableJwtAuth(other, 'jwt', { app: ['default'] });
      const classAttrs = {
        ...attrs('- {objectName: x, secretPath: cubbyhole/none}\n', { vaultAddress: other.address }),
        'csi.storage.k8s.io/serviceAccount.tokens': otherJwt.tokensAttribute(otherJwt.token()),
      };
      expect((await provider.mountError(classAttrs)).code).to.equal('NOT_FOUND');
      await other.stop();
      const failure = await provider.mountError(classAttrs);
      expect(failure.code).to.equal('UNAVAILABLE');
      expect(failure.details).to.match(/cannot reach Vault at http:\/\/127\.0\.0\.1:\d+ \((ECONNREFUSED|ECONNRESET)\)/);
    });
  });
});
