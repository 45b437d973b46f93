// Concurrent logins of one identity with different JWTs and deadlines. The Vault here is
// a small HTTP server in the test, a stand-in only for timing (a login that takes ~800 ms
// and refuses one JWT), which real OpenBao can't be made to do on cue; the client is the
// real node-vault one (createVaultHttp) and the session the real VaultSession.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SscError } from '../../../../lib/errors.js';
import type { VaultIdentity } from '../../../../providers/vault/identity.js';
import { VaultSession, type SessionCall } from '../../../../providers/vault/vault-session.js';
import { createVaultHttp } from '../../../../providers/vault/vault-http.js';
import { NO_VAULT_TLS, TEST_VAULT_IDENTITY } from '../../../support/vault-fixtures.js';

const LOGIN_MS = 800;
const REFUSED_JWT = 'jwt-of-a-deleted-pod';

describe('vault session logins shared by concurrent Mounts', () => {
  let server: Server;
  let address: string;
  let logins: string[];

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/auth/jwt/login') {
          res.writeHead(404).end('{"errors":[]}');
          return;
        }
        const jwt = (JSON.parse(body) as { jwt: string }).jwt;
        logins.push(jwt);
        setTimeout(() => {
          res.setHeader('content-type', 'application/json');
          if (jwt === REFUSED_JWT) res.writeHead(403).end(JSON.stringify({ errors: ['permission denied'] }));
          else
            res.writeHead(200).end(JSON.stringify({ auth: { client_token: `token-for-${jwt}`, lease_duration: 600 } }));
        }, LOGIN_MS);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    logins = [];
  });

  async function session(): Promise<VaultSession> {
    const identity: VaultIdentity = { ...TEST_VAULT_IDENTITY, vaultAddress: address, vaultAuthMountPath: 'jwt' };
    const http = await createVaultHttp(address, undefined, NO_VAULT_TLS, { maxResponseBytes: 1 << 20 });
    return new VaultSession(identity, http);
  }
  const call = (jwt: string, deadlineInMs = 10_000): SessionCall => ({
    jwt,
    deadlineMs: Date.now() + deadlineInMs,
    requestTimeoutMs: 10_000,
  });
  const settle = <T>(p: Promise<T>) =>
    p.then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
  const joinSoon = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('a refused JWT that logged in first does not fail a concurrent Mount with a good one', async () => {
    const s = await session();
    const bad = settle(s.validToken(call(REFUSED_JWT)));
    await joinSoon();
    const good = settle(s.validToken(call('jwt-of-a-live-pod')));
    const [b, g] = await Promise.all([bad, good]);
    expect(b.ok).to.equal(false);
    expect((b as { e: SscError }).e.kind).to.equal('permission-denied');
    expect(g.ok, String((g as { e?: unknown }).e)).to.equal(true);
    expect((g as { v: { clientToken: string } }).v.clientToken).to.equal('token-for-jwt-of-a-live-pod');
    expect(logins).to.deep.equal([REFUSED_JWT, 'jwt-of-a-live-pod']);
  });

  it('a short-deadline Mount that logged in first does not fail a concurrent long-deadline one', async () => {
    const s = await session();
    const short = settle(s.validToken(call('jwt-a', 400)));
    await joinSoon();
    const long = settle(s.validToken(call('jwt-b', 10_000)));
    const [sh, lo] = await Promise.all([short, long]);
    expect(sh.ok).to.equal(false);
    expect((sh as { e: SscError }).e.kind).to.equal('deadline-exceeded');
    expect(lo.ok, String((lo as { e?: unknown }).e)).to.equal(true);
  });

  it('Mounts arriving meanwhile with good JWTs still share one login', async () => {
    const s = await session();
    const first = s.validToken(call('jwt-1'));
    await joinSoon();
    const tokens = await Promise.all([first, s.validToken(call('jwt-2')), s.validToken(call('jwt-3'))]);
    expect(new Set(tokens.map((t) => t.clientToken)).size).to.equal(1);
    expect(logins).to.have.length(1);
    expect(s.stats.logins).to.equal(1);
  });
});
