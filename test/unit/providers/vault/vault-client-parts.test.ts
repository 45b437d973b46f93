import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { identityKey, type VaultIdentity } from '../../../../providers/vault/identity.js';
import {
  deletedVersion,
  parseMountInfo,
  readPlan,
  readQuery,
  secretData,
  type MountInfo,
} from '../../../../providers/vault/kv-path.js';
import { parseObjects, type VaultObject } from '../../../../providers/vault/objects.js';
import { SessionCache } from '../../../../providers/vault/session-cache.js';
import { serviceAccountToken, TOKENS_ATTRIBUTE } from '../../../../providers/framework/sa-token.js';
import { tokenNeedsLogin } from '../../../../providers/vault/token-expiry.js';
import {
  failureOf,
  vaultError,
  type VaultFailure,
  type VaultOperation,
} from '../../../../providers/vault/vault-errors.js';
import { encodePath } from '../../../../providers/vault/vault-http.js';
import { checkTokenSubject, jwtSubject } from '../../../../providers/framework/jwt-subject.js';
import { VAULT_TOKEN_REQUESTER } from '../../../../providers/vault/parameters.js';
import { rejection } from '../../../support/deferred.js';
import { TEST_VAULT_IDENTITY as ID } from '../../../support/vault-fixtures.js';

function object(yaml: string): VaultObject {
  const o = parseObjects(yaml).objects[0];
  if (!o) throw new Error('no object');
  return o;
}

describe('vault identity key', () => {
  it('differs when any field differs, and only then', () => {
    const variants: VaultIdentity[] = [
      { ...ID, vaultAddress: 'https://other:8200' },
      { ...ID, vaultNamespace: 'team' },
      { ...ID, vaultAuthMountPath: 'jwt' },
      { ...ID, roleName: 'admin' },
      { ...ID, audience: 'bao' },
      { ...ID, serviceAccount: 'shop/api' },
      { ...ID, serviceAccount: 'other/web' },
      { ...ID, tls: { ...ID.tls, skipVerify: true } },
      { ...ID, tls: { ...ID.tls, caCertPath: '/ca.pem' } },
      { ...ID, tls: { ...ID.tls, serverName: 'v' } },
      { ...ID, tls: { ...ID.tls, clientCertPath: '/c', clientKeyPath: '/k' } },
    ];
    const keys = new Set([identityKey(ID), ...variants.map(identityKey)]);
    expect(keys.size).to.equal(variants.length + 1);
    expect(identityKey({ ...ID, tls: { ...ID.tls } })).to.equal(identityKey(ID));
  });
});

describe('vault SessionCache', () => {
  /** A session that counts its closes, and a factory of them counting what it made. */
  class FakeSession {
    closes = 0;
    constructor(readonly name: string) {}
    close(): void {
      this.closes++;
    }
  }
  const made: FakeSession[] = [];
  const create = (name: string) => () => {
    const s = new FakeSession(name);
    made.push(s);
    return Promise.resolve(s);
  };
  beforeEach(() => {
    made.length = 0;
  });

  it('keeps one session per key, evicting and closing the least recently used beyond capacity', async () => {
    const cache = new SessionCache<FakeSession>(2);
    const a = await cache.session('a', create('a'));
    await cache.session('b', create('b'));
    expect(await cache.session('a', create('a2'))).to.equal(a); // a is now the most recently used
    await cache.session('c', create('c'));
    await Promise.resolve();
    expect(made.map((s) => `${s.name}:${s.closes}`)).to.deep.equal(['a:0', 'b:1', 'c:0']);
    expect((await cache.session('b', create('b2'))).name).to.equal('b2');
    expect(cache.size).to.equal(2);
  });

  it('does not keep a session whose creation failed: the next caller creates one again', async () => {
    const cache = new SessionCache<FakeSession>(2);
    const failed = cache.session('a', () => Promise.reject(new Error('bad CA file')));
    expect(((await rejection(failed)) as Error).message).to.equal('bad CA file');
    expect((await cache.session('a', create('a'))).name).to.equal('a');
    expect(cache.size).to.equal(1);
  });

  it('forgets a session without closing it (its caller does), and only if it is still the cached one', async () => {
    const cache = new SessionCache<FakeSession>(2);
    const a = await cache.session('a', create('a'));
    cache.forget('a', new FakeSession('other'));
    await Promise.resolve();
    expect(cache.size).to.equal(1);
    cache.forget('a', a);
    await Promise.resolve();
    expect([cache.size, a.closes]).to.deep.equal([0, 0]);
  });

  it('with a capacity of 0 keeps none and closes each session once made', async () => {
    const cache = new SessionCache<FakeSession>(0);
    const a = await cache.session('a', create('a'));
    await Promise.resolve();
    expect([a.closes, cache.size]).to.deep.equal([1, 0]);
    expect(await cache.session('a', create('a2'))).to.not.equal(a);
  });
});

describe('vault KV path mapping', () => {
  const kv2: MountInfo = { path: 'secret', type: 'kv', kvVersion: 2 };
  const kv1: MountInfo = { path: 'kv1', type: 'kv', kvVersion: 1 };
  const cases: [string, MountInfo | undefined, string, boolean][] = [
    ['{objectName: a, secretPath: secret/app/db}', kv2, 'secret/data/app/db', true],
    ['{objectName: a, secretPath: secret/data/app/db}', kv2, 'secret/data/app/db', true],
    ['{objectName: a, secretPath: "secret/app/db?version=3"}', kv2, 'secret/data/app/db', true],
    ['{objectName: a, secretPath: secret/metadata/app/db}', kv2, 'secret/metadata/app/db', false],
    ['{objectName: a, secretPath: secret/config}', kv2, 'secret/config', false],
    ['{objectName: a, secretPath: secret/app/db, method: PUT}', kv2, 'secret/app/db', false],
    ['{objectName: a, secretPath: kv1/app/db}', kv1, 'kv1/app/db', false],
    ['{objectName: a, secretPath: secret/app/db}', undefined, 'secret/app/db', false],
    ['{objectName: a, secretPath: other/app}', kv2, 'other/app', false],
    ['{objectName: a, secretPath: team/kv/x}', { path: 'team/kv', type: 'kv', kvVersion: 2 }, 'team/kv/data/x', true],
  ];
  for (const [yaml, mount, path, kv2Data] of cases) {
    it(`${yaml} on ${mount ? `${mount.path} (v${mount.kvVersion})` : 'an unknown mount'} → ${path}`, () => {
      expect(readPlan(object(`- ${yaml}`), mount)).to.deep.equal({ path, kv2Data });
    });
  }

  it('parses sys/internal/ui/mounts answers: KV v2, KV v1, other engines, nonsense', () => {
    expect(parseMountInfo({ data: { path: 'secret/', type: 'kv', options: { version: '2' } } })).to.deep.equal({
      path: 'secret',
      type: 'kv',
      kvVersion: 2,
    });
    expect(parseMountInfo({ data: { path: 'kv1/', type: 'kv', options: null } })).to.deep.equal({
      path: 'kv1',
      type: 'kv',
      kvVersion: 1,
    });
    expect(parseMountInfo({ data: { path: 'pki/', type: 'pki', options: { version: '2' } } })).to.deep.equal({
      path: 'pki',
      type: 'pki',
      kvVersion: 1,
    });
    expect(parseMountInfo({ data: null })).to.equal(undefined);
    expect(parseMountInfo(undefined)).to.equal(undefined);
  });

  it('sends version first, then the other query parameters, encoded', () => {
    expect(readQuery(object('- {objectName: a, secretPath: "secret/x?b=1&version=2&c=a%20b"}'))).to.equal(
      '?version=2&b=1&c=a+b',
    );
    expect(readQuery(object('- {objectName: a, secretPath: secret/x}'))).to.equal('');
  });

  it('unwraps KV v2 data.data; a deleted or destroyed version is NOT_FOUND naming the path', () => {
    const o = object('- {objectName: a, secretPath: "secret/x?version=2"}');
    expect(
      secretData(o, { path: 'secret/data/x', kv2Data: true }, { data: { data: { k: 'v' }, metadata: { version: 2 } } }),
    ).to.deep.equal({ k: 'v' });
    expect(secretData(o, { path: 'kv1/x', kv2Data: false }, { data: { k: 'v' } })).to.deep.equal({ k: 'v' });
    expect(
      deletedVersion({ data: { data: null, metadata: { deletion_time: '2026-01-01T00:00:00Z', destroyed: false } } }),
    ).to.equal('deleted');
    expect(deletedVersion({ data: { data: null, metadata: { deletion_time: '', destroyed: true } } })).to.equal(
      'destroyed',
    );
    expect(deletedVersion({ data: { data: { k: 'v' }, metadata: { deletion_time: '' } } })).to.equal(undefined);
    const err = (() => {
      try {
        secretData(
          o,
          { path: 'secret/data/x', kv2Data: true },
          { data: { data: null, metadata: { deletion_time: 't', destroyed: false } } },
        );
      } catch (e) {
        return e as SscError;
      }
      return undefined;
    })();
    expect([err?.kind, err?.reason, err?.message]).to.deep.equal([
      'not-found',
      'SecretVersionDeleted',
      'secret "secret/x?version=2" version 2 was deleted in Vault (KV v2); undelete it or write a new version',
    ]);
    expect(() => secretData(o, { path: 'p', kv2Data: false }, undefined)).to.throw(SscError, 'holds no data');
  });

  it('encodes each path segment: secretPath is literal text', () => {
    expect(encodePath('secret/data/a b/c?d')).to.equal('secret/data/a%20b/c%3Fd');
  });
});

describe('vault errors as gRPC codes', () => {
  const read: VaultOperation = {
    action: 'read',
    path: 'secret/data/db',
    roleName: 'app',
    vaultAddress: 'https://v:8200',
    vaultNamespace: 'team',
  };
  const login: VaultOperation = { ...read, action: 'login', path: 'auth/kubernetes/login' };
  const status = (s: number, errors: string[] = []): VaultFailure => ({
    type: 'status',
    status: s,
    errors,
    body: { errors },
  });
  const table: [VaultFailure, VaultOperation, string, string, string][] = [
    [
      status(403, ['permission denied']),
      read,
      'permission-denied',
      'VaultPermissionDenied',
      'Vault at https://v:8200 (namespace "team") denied reading "secret/data/db" to role "app" (HTTP 403): the role\'s policies must allow it',
    ],
    [
      status(404),
      read,
      'not-found',
      'SecretNotFound',
      'secret "secret/data/db" not found in Vault at https://v:8200 (namespace "team")',
    ],
    [
      status(503, ['Vault is sealed']),
      read,
      'unavailable',
      'VaultSealed',
      'Vault at https://v:8200 (namespace "team") is sealed or not ready (HTTP 503) for "secret/data/db"',
    ],
    [
      status(500),
      read,
      'unavailable',
      'VaultServerError',
      'Vault at https://v:8200 (namespace "team") failed read "secret/data/db" (HTTP 500)',
    ],
    [
      status(429),
      read,
      'resource-exhausted',
      'VaultThrottled',
      'Vault at https://v:8200 (namespace "team") throttled read "secret/data/db" (HTTP 429)',
    ],
    [
      { type: 'throttled', retryAfterMs: 2500, errors: ['1 request per second exceeded'] },
      read,
      'resource-exhausted',
      'VaultThrottled',
      'Vault at https://v:8200 (namespace "team") throttled read "secret/data/db" (HTTP 429); it asked to wait 3s: 1 request per second exceeded',
    ],
    [
      status(400, ['common name evil.test not allowed\n']),
      read,
      'invalid-argument',
      'VaultBadRequest',
      'Vault at https://v:8200 (namespace "team") refused read "secret/data/db" as a bad request (HTTP 400): common name evil.test not allowed',
    ],
    [
      status(400, ['invalid audience (aud) claim\u001b[31m']),
      login,
      'permission-denied',
      'VaultLoginFailed',
      'Vault at https://v:8200 (namespace "team") refused the login at "auth/kubernetes/login" as role "app" (HTTP 400): invalid audience (aud) claim\\u001b[31m',
    ],
    [
      status(403, ['permission denied']),
      login,
      'permission-denied',
      'VaultLoginFailed',
      'Vault at https://v:8200 (namespace "team") refused the login at "auth/kubernetes/login" as role "app" (HTTP 403): permission denied',
    ],
    [
      status(404, []),
      { ...login, path: 'auth/k8s/c1/login' },
      'invalid-argument',
      'VaultAuthMountNotFound',
      'Vault at https://v:8200 (namespace "team") has no auth method at "k8s/c1" (login "auth/k8s/c1/login" answered HTTP 404): check vaultAuthMountPath (or --vault-mount)',
    ],
    [
      { type: 'network', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' },
      read,
      'unavailable',
      'VaultUnreachable',
      'cannot reach Vault at https://v:8200 (namespace "team") (ECONNREFUSED)',
    ],
    [
      { type: 'tls', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', message: 'unable to verify the first certificate' },
      read,
      'unavailable',
      'VaultTLSError',
      'TLS with Vault at https://v:8200 (namespace "team") failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE): unable to verify the first certificate; check vaultCACertPath, vaultTLSServerName and the client certificate',
    ],
    [
      { type: 'timeout', ms: 1500 },
      read,
      'deadline-exceeded',
      'VaultTimeout',
      'Vault at https://v:8200 (namespace "team") did not answer read "secret/data/db" within 1500 ms',
    ],
    [
      { type: 'deadline' },
      login,
      'deadline-exceeded',
      'VaultTimeout',
      'the Mount\'s deadline passed before Vault at https://v:8200 (namespace "team") answered (login "auth/kubernetes/login")',
    ],
  ];
  for (const [failure, op, kind, reason, message] of table) {
    it(`${failure.type}${failure.type === 'status' ? ` ${failure.status}` : ''} on ${op.action} → ${kind} ${reason}`, () => {
      const e = vaultError(failure, op);
      expect([e.kind, e.reason, e.message]).to.deep.equal([kind, reason, message]);
    });
  }

  it('reduces node-vault and axios errors to what may be shown (never the request config or its token)', () => {
    expect(failureOf({ response: { statusCode: 403, body: { errors: ['permission denied'] } } }, 1000)).to.deep.equal({
      type: 'status',
      status: 403,
      errors: ['permission denied'],
      body: { errors: ['permission denied'] },
    });
    expect(
      failureOf(
        {
          code: 'ECONNABORTED',
          message: 'timeout of 1000ms exceeded',
          config: { headers: { 'X-Vault-Token': 's.x' } },
        },
        1000,
      ),
    ).to.deep.equal({ type: 'timeout', ms: 1000 });
    expect(
      failureOf({ code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: 'Hostname/IP does not match', config: {} }, 1000),
    ).to.deep.equal({ type: 'tls', code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: 'Hostname/IP does not match' });
    expect(failureOf({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:1' }, 1000)).to.deep.equal({
      type: 'network',
      code: 'ECONNREFUSED',
      message: 'connect ECONNREFUSED 127.0.0.1:1',
    });
    expect(failureOf('weird', 1000)).to.deep.equal({ type: 'network', code: 'error', message: '' });
  });
});

describe('vault token expiry', () => {
  const token = { clientToken: 's.x', obtainedAtMs: 0, leaseSeconds: 300 };
  const cases: [string, Parameters<typeof tokenNeedsLogin>, boolean][] = [
    ['no token', [undefined, 0, 1000], true],
    ['fresh token', [token, 10_000, 1000], false],
    ['just before two thirds', [token, 198_999, 1000], false],
    ['the request would end past two thirds', [token, 199_000, 1000], true],
    ['expired', [token, 400_000, 1000], true],
    ['a token that does not expire', [{ ...token, leaseSeconds: 0 }, 10 ** 12, 1000], false],
  ];
  for (const [name, args, expected] of cases)
    it(`${name}: ${expected ? 'log in' : 'reuse'}`, () => expect(tokenNeedsLogin(...args)).to.equal(expected));
});

describe('vault service-account token from the driver', () => {
  const attrs = (tokens: unknown) => ({ [TOKENS_ATTRIBUTE]: JSON.stringify(tokens) });
  it('picks the token of the audience', () => {
    expect(
      serviceAccountToken(
        attrs({ vault: { token: 'jwt-1', expirationTimestamp: 'x' }, other: { token: 'jwt-2' } }),
        'other',
        VAULT_TOKEN_REQUESTER,
      ),
    ).to.equal('jwt-2');
  });
  it('a missing audience is FAILED_PRECONDITION naming it and the tokenRequests, without tokens', () => {
    const failure = (a: Record<string, string>, aud: string) => {
      try {
        serviceAccountToken(a, aud, VAULT_TOKEN_REQUESTER);
      } catch (e) {
        return e as SscError;
      }
      throw new Error('expected an error');
    };
    const e = failure(attrs({ vault: { token: 'jwt-1' } }), 'bao');
    expect([e.kind, e.reason]).to.deep.equal(['failed-precondition', 'ServiceAccountTokenMissing']);
    expect(e.message).to.equal(
      'vault provider: no service-account token for audience "bao" (the driver passed only "vault"): add {audience: "bao"} to the CSIDriver\'s spec.tokenRequests (the class\'s audience parameter picks it)',
    );
    expect(failure({}, 'vault').message).to.include('the driver passed no csi.storage.k8s.io/serviceAccount.tokens');
    expect(failure({ [TOKENS_ATTRIBUTE]: '{' }, 'vault').kind).to.equal('invalid-argument');
  });
});

describe("vault provider and node-vault's token-storing commands", () => {
  it("calls none of node-vault's commands that store a token in the shared client (logins, certLogin) nor its renewal timers", async () => {
    const { readFileSync, readdirSync } = await import('node:fs');
    const { createRequire } = await import('node:module');
    const { fileURLToPath } = await import('node:url');
    const require = createRequire(import.meta.url);
    const commands = require('node-vault/src/commands.js') as Record<string, { tokenSource?: boolean }>;
    const stores = Object.entries(commands)
      .filter(([, c]) => c.tokenSource)
      .map(([name]) => name);
    expect(stores).to.include.members(['kubernetesLogin', 'jwtLogin', 'certLogin']);
    const dir = fileURLToPath(new URL('../../../../../providers/vault/', import.meta.url));
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(`${dir}${file}`, 'utf8');
      for (const name of [...stores, 'tokenRenewSelf', 'startTokenRenewal'])
        expect(source, `${file} calls ${name}`).to.not.match(new RegExp(`\\.${name}\\(`));
    }
  });
});

describe('vault service-account token subject', () => {
  const jwtWith = (payload: unknown): string =>
    `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2lnbmF0dXJl`;
  it('reads the sub claim without verifying; nonsense has none', () => {
    expect(jwtSubject(jwtWith({ sub: 'system:serviceaccount:shop:web' }))).to.equal('system:serviceaccount:shop:web');
    expect(jwtSubject(jwtWith({ aud: ['vault'] }))).to.equal(undefined);
    expect(jwtSubject('garbage')).to.equal(undefined);
    expect(jwtSubject('a.!!!.c')).to.equal(undefined);
  });
  it('a token of another service account, or no JWT, is FAILED_PRECONDITION naming the expected subject, never the token', () => {
    expect(() =>
      checkTokenSubject(jwtWith({ sub: 'system:serviceaccount:shop:web' }), 'shop', 'web', 'vault'),
    ).to.not.throw();
    const cases: [string, string][] = [
      [jwtWith({ sub: 'system:serviceaccount:shop:admin' }), 'has sub "system:serviceaccount:shop:admin"'],
      ['not-a-jwt-s3cret', 'is not a JWT with a "sub" claim'],
    ];
    for (const [token, why] of cases) {
      try {
        checkTokenSubject(token, 'shop', 'web', 'vault');
        expect.fail('expected FAILED_PRECONDITION');
      } catch (err) {
        expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
          'failed-precondition',
          'ServiceAccountTokenMismatch',
        ]);
        expect((err as SscError).message)
          .to.include(why)
          .and.include('not "system:serviceaccount:shop:web"')
          .and.not.include('s3cret')
          .and.not.include('c2lnbmF0dXJl');
      }
    }
  });
});
