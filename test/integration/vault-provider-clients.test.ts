import { expect } from 'chai';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_SOCKETS } from '../../providers/vault/vault-transport.js';
import { openBaoUnavailable, startOpenBao, type OpenBao, type OpenBaoTls } from '../support/openbao.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// One Vault client per (address, namespace, TLS settings), shared by every identity using
// it, with the real provider process against a real OpenBao: many service accounts
// mounting at once never hold more than MAX_SOCKETS connections to one Vault (counted by a
// TCP relay in front of OpenBao), and a CA file is read again once after a TLS failure,
// not once per identity.

const IDENTITIES = 40;
const OBJECTS = `
- {objectName: user, secretPath: secret/app/db, secretKey: user}
- {objectName: password, secretPath: secret/app/db, secretKey: password}
- {objectName: api, secretPath: secret/app/api, secretKey: token}
`;

/** A TCP relay to `port` that counts the connections open through it at once. */
interface CountingRelay {
  readonly address: string;
  /** Most connections open at the same time so far. */
  readonly maxOpen: number;
  close(): Promise<void>;
}

async function countingRelay(port: number): Promise<CountingRelay> {
  let open = 0;
  let maxOpen = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const upstream = createConnection(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', () => {
      open--;
      sockets.delete(client);
      end();
    });
    upstream.once('close', () => {
      sockets.delete(upstream);
      end();
    });
    client.on('error', end);
    upstream.on('error', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    get maxOpen() {
      return maxOpen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('vault provider clients: one per address, namespace and TLS settings, shared by identities (real OpenBao)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let tls: OpenBaoTls;
  let jwt: JwtAuth;
  let provider: VaultProviderProcess;
  let relay: CountingRelay | undefined;
  let dir: string | undefined;

  function attrs(serviceAccount: string, extra: Record<string, string>): Record<string, string> {
    return {
      roleName: 'app',
      vaultAuthMountPath: jwt.mount,
      objects: OBJECTS,
      ...podAttributes(`${serviceAccount.replace('/', '-')}-0`, serviceAccount),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token(serviceAccount)),
      ...extra,
    };
  }
  const accounts = (ns: string) => Array.from({ length: IDENTITIES }, (_, i) => `${ns}/sa-${i}`);

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault client sharing tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao({ tls: true });
    if (!bao.tls) throw new Error('OpenBao started without TLS');
    tls = bao.tls;
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'] });
    await bao.write('secret/data/app/db', { data: { user: 'app', password: 's3cret' } });
    await bao.write('secret/data/app/api', { data: { token: 't0ken' } });
    provider = await startVaultProvider();
  });
  after(async () => {
    await provider?.stop();
    await relay?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await bao?.stop();
  });

  it(`${IDENTITIES} service accounts mounting at once hold at most ${MAX_SOCKETS} connections to Vault`, async () => {
    relay = await countingRelay(Number(new URL(bao.address).port));
    const vaultAddress = relay.address;
    const results = await Promise.all(accounts('load').map((sa) => provider.mount(attrs(sa, { vaultAddress }))));
    for (const r of results)
      expect(r.files.map((f) => f.contents.toString())).to.deep.equal(['app', 's3cret', 't0ken']);
    // Every identity's idle connections stay open (keep-alive): a client per identity held one each.
    expect(relay.maxOpen).to.be.within(1, MAX_SOCKETS);
  });

  it('a CA file fixed after TLS failures of many identities is read again once, and the new client is shared', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-ca-shared-'));
    const caFile = join(dir, 'ca.pem');
    const settings = { vaultAddress: tls.address, vaultCACertPath: caFile };
    // A PEM certificate, but not the CA that signed OpenBao's.
    await copyFile(tls.clientCertPath, caFile);
    const sas = accounts('tls');
    const failures = await Promise.all(sas.map((sa) => provider.mountError(attrs(sa, settings))));
    for (const f of failures)
      expect([f.code, f.details.includes('TLS with Vault')]).to.deep.equal(['UNAVAILABLE', true]);

    await copyFile(tls.caCertPath, caFile);
    const first = await provider.mount(attrs(sas[0] as string, settings));
    expect(first.files[1]?.contents.toString()).to.equal('s3cret');
    // The file is wrong again; the other identities use the client made from the read above.
    await copyFile(tls.clientCertPath, caFile);
    const rest = await Promise.all(sas.slice(1).map((sa) => provider.mount(attrs(sa, settings))));
    for (const r of rest) expect(r.files[1]?.contents.toString()).to.equal('s3cret');
  });
});
