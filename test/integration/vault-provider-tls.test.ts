import { expect } from 'chai';
import { mkdir, mkdtemp, copyFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createVaultHttp, VaultCallError } from '../../providers/vault/vault-http.js';
import { openBaoUnavailable, startOpenBao, type OpenBao, type OpenBaoTls } from '../support/openbao.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';
import { NO_VAULT_TLS } from '../support/vault-fixtures.js';

// TLS and mTLS settings of the vault provider against OpenBao's TLS listener (a test CA
// that no default trust store holds), and node-vault's environment fallbacks: a provider
// started with VAULT_SKIP_VERIFY=false (which node-vault reads as "skip"), VAULT_TOKEN
// and VAULT_PREFIX still verifies TLS and sends neither; a client built in a process
// with VAULT_* set takes nothing from them (VAULT_NAMESPACE included: for the provider it
// is a documented default namespace, resolved by settings.ts, never by node-vault).

const LIMITS = { maxResponseBytes: 4 * 1024 * 1024 };

describe('vault provider TLS, mTLS and VAULT_* isolation (real OpenBao)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let tls: OpenBaoTls;
  let jwt: JwtAuth;
  let provider: VaultProviderProcess;
  let recorder: Server;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const savedEnv = { ...process.env };

  function attrs(extra: Record<string, string>, role = 'app'): Record<string, string> {
    return {
      roleName: role,
      vaultAddress: tls.address,
      vaultAuthMountPath: jwt.mount,
      objects: '- {objectName: p, secretPath: secret/app/db, secretKey: password}\n',
      ...podAttributes(),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token()),
      ...extra,
    };
  }
  const client = () => ({ vaultTLSClientCertPath: tls.clientCertPath, vaultTLSClientKeyPath: tls.clientKeyPath });

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault provider TLS tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao({ tls: { requireClientCert: true } });
    if (!bao.tls) throw new Error('OpenBao started without TLS');
    tls = bao.tls;
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'], outsider: ['default'] });
    await bao.write('secret/data/app/db', { data: { password: 's3cret' } });
    // Records what a provider sends: a stand-in Vault on plain HTTP that refuses everything.
    recorder = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"errors":["permission denied"]}');
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    provider = await startVaultProvider([], {
      VAULT_SKIP_VERIFY: 'false',
      VAULT_TOKEN: bao.rootToken,
      VAULT_PREFIX: '/prefixed',
      VAULT_ADDR: bao.address,
    });
  });
  after(async () => {
    process.env = savedEnv;
    await provider?.stop();
    recorder?.closeAllConnections();
    await new Promise<void>((resolve) => (recorder ? recorder.close(() => resolve()) : resolve()));
    await bao?.stop();
  });

  it("VAULT_SKIP_VERIFY=false in the environment: the provider still verifies Vault's certificate", async () => {
    const failure = await provider.mountError(attrs(client()));
    expect(failure.code).to.equal('UNAVAILABLE');
    expect(failure.details).to.match(
      /TLS with Vault at https:\/\/127\.0\.0\.1:\d+ failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)/,
    );
  });

  it('VAULT_TOKEN and VAULT_PREFIX in the environment are never sent', async () => {
    const address = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
    seen.length = 0;
    const failure = await provider.mountError(attrs({ vaultAddress: address }));
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(seen.map((r) => r.url)).to.deep.equal(['/v1/auth/jwt/login']);
    expect(seen[0]?.headers).to.not.have.property('x-vault-token');
    // With the root token from VAULT_TOKEN a role without rights would read the secret.
    const outsider = await provider.mountError(attrs({ ...client(), vaultCACertPath: tls.caCertPath }, 'outsider'));
    expect(outsider.code).to.equal('PERMISSION_DENIED');
  });

  it('in process too: a client built while VAULT_* are set verifies TLS and sends no token, namespace or prefix of theirs', async () => {
    Object.assign(process.env, {
      VAULT_SKIP_VERIFY: 'false',
      VAULT_TOKEN: bao.rootToken,
      VAULT_ADDR: bao.address,
      VAULT_NAMESPACE: 'nowhere',
      VAULT_PREFIX: '/prefixed',
    });
    seen.length = 0;
    const plain = await createVaultHttp(
      `http://127.0.0.1:${(recorder.address() as { port: number }).port}`,
      undefined,
      NO_VAULT_TLS,
      LIMITS,
    );
    await plain.call({ method: 'GET', path: 'sys/mounts', timeoutMs: 5_000 }).catch(() => undefined);
    expect(seen.map((r) => r.url)).to.deep.equal(['/v1/sys/mounts']);
    expect(seen[0]?.headers).to.not.have.property('x-vault-token');
    expect(seen[0]?.headers).to.not.have.property('x-vault-namespace');
    const http = await createVaultHttp(
      tls.address,
      undefined,
      { ...NO_VAULT_TLS, clientCertPath: tls.clientCertPath, clientKeyPath: tls.clientKeyPath },
      LIMITS,
    );
    const failure = await http.call({ method: 'GET', path: 'sys/mounts', timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).to.be.instanceOf(VaultCallError);
    expect((failure as VaultCallError).failure.type).to.equal('tls');
    const trusted = await createVaultHttp(
      tls.address,
      undefined,
      {
        ...NO_VAULT_TLS,
        caCertPath: tls.caCertPath,
        clientCertPath: tls.clientCertPath,
        clientKeyPath: tls.clientKeyPath,
      },
      LIMITS,
    );
    const denied = await trusted.call({ method: 'GET', path: 'sys/mounts', timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((denied as VaultCallError).failure).to.include({ type: 'status', status: 403 });
  });

  it('HTTP_PROXY is honoured by the HTTP client (documented); NO_PROXY is the way out', async () => {
    const proxyAddress = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
    for (const [env, proxied] of [
      [{ HTTP_PROXY: proxyAddress }, true],
      [{ HTTP_PROXY: proxyAddress, NO_PROXY: '127.0.0.1' }, false],
    ] as const) {
      const proxiedProvider = await startVaultProvider([], env);
      try {
        seen.length = 0;
        const result = await proxiedProvider.mount(attrs({ vaultAddress: bao.address })).then(
          () => 'read',
          () => 'failed',
        );
        // Through the "proxy" (the recorder, which refuses everything) the Mount fails and the recorder saw the absolute URL.
        expect([result, seen.map((r) => r.url)]).to.deep.equal(
          proxied ? ['failed', [`${bao.address}/v1/auth/jwt/login`]] : ['read', []],
        );
      } finally {
        await proxiedProvider.stop();
      }
    }
  });

  it('vaultCACertPath with the client certificate (mTLS): reads', async () => {
    const res = await provider.mount(attrs({ ...client(), vaultCACertPath: tls.caCertPath }));
    expect(res.files[0]?.contents.toString()).to.equal('s3cret');
  });

  it('mTLS without a client certificate: UNAVAILABLE, a TLS error', async () => {
    const failure = await provider.mountError(attrs({ vaultCACertPath: tls.caCertPath }));
    expect(failure.code).to.equal('UNAVAILABLE');
    expect(failure.details).to.match(/TLS with Vault|cannot reach Vault/);
  });

  it('vaultCADirectory: the CA from a directory of PEM files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ssc-ca-'));
    try {
      await mkdir(join(dir, 'sub'));
      await copyFile(tls.caCertPath, join(dir, 'ca.pem'));
      const res = await provider.mount(attrs({ ...client(), vaultCADirectory: dir }));
      expect(res.files[0]?.contents.toString()).to.equal('s3cret');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a rotated CA file takes effect at the next Mount: a TLS failure retires the client it happened on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ssc-ca-rotate-'));
    try {
      const caFile = join(dir, 'ca.pem');
      // Not the CA that signed OpenBao's certificate: a PEM certificate all the same.
      await copyFile(tls.clientCertPath, caFile);
      const before = await provider.mountError(attrs({ ...client(), vaultCACertPath: caFile }));
      expect(before.code).to.equal('UNAVAILABLE');
      expect(before.details).to.include('TLS with Vault');
      await copyFile(tls.caCertPath, caFile);
      const after = await provider.mount(attrs({ ...client(), vaultCACertPath: caFile }));
      expect(after.files[0]?.contents.toString()).to.equal('s3cret');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('vaultTLSServerName: the certificate is checked against that name', async () => {
    const ok = await provider.mount(
      attrs({ ...client(), vaultCACertPath: tls.caCertPath, vaultTLSServerName: tls.serverName }),
    );
    expect(ok.files[0]?.contents.toString()).to.equal('s3cret');
    const failure = await provider.mountError(
      attrs({ ...client(), vaultCACertPath: tls.caCertPath, vaultTLSServerName: 'other.test' }),
    );
    expect(failure.code).to.equal('UNAVAILABLE');
    expect(failure.details).to.include('ERR_TLS_CERT_ALTNAME_INVALID').and.include('other.test');
  });

  it('vaultSkipTLSVerify "true": no verification (insecure, as asked)', async () => {
    const res = await provider.mount(attrs({ ...client(), vaultSkipTLSVerify: 'true' }));
    expect(res.files[0]?.contents.toString()).to.equal('s3cret');
  });

  it('an unreadable CA file: FAILED_PRECONDITION naming the file and where it is set', async () => {
    const failure = await provider.mountError(attrs({ ...client(), vaultCACertPath: '/nonexistent/ca.pem' }));
    expect(failure.code).to.equal('FAILED_PRECONDITION');
    expect(failure.details).to.equal(
      'vault provider: cannot read the CA certificate (vaultCACertPath, --vault-tls-ca-cert or VAULT_CACERT) /nonexistent/ca.pem (ENOENT)',
    );
  });
});
