// The vault provider's part of the demo, run when OpenBao's `bao` is installed: a
// throwaway `bao server -dev` (in memory, a loopback port, a random root token never
// shown), a KV v2 secret and JWT auth with a key made here, then the vault provider and a
// volume of the class demo-vault published through the demo's driver. The pod's token is
// a JWT the demo signs, standing in for the one kubelet mints for the CSIDriver's
// tokenRequests. Everything it starts is a DemoSession child, so any exit cleans it up.
import { createSign, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { inlinePublishRequest, inlineVolumeContext, type CsiClient } from './csi-client.js';
import { line, showContents, showTree, showVersions, step } from './demo-output.js';
import type { DemoSession } from './demo-session.js';
import type { BaoLocation } from './demo-bao.js';

/** The vault volume's id and the class it mounts. */
export const VAULT_VOLUME_ID = 'demo-vault-volume';
const VAULT_SPC = 'demo-vault';
const ROLE = 'demo-role';
const ISSUER = 'https://kubernetes.default.svc';
const SUBJECT = 'system:serviceaccount:default:default';

/** The class the driver reads (local mode); the provider's --vault-addr supplies the address. */
export const VAULT_CLASS = `# Written by the demo: the vault provider reads secret/demo/db from the demo's OpenBao.
apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${VAULT_SPC}
  namespace: default
spec:
  provider: vault
  parameters:
    roleName: ${ROLE}
    vaultAuthMountPath: jwt
    objects: |
      - objectName: db-password
        secretPath: secret/demo/db        # KV v2, no data/ needed
        secretKey: password
        filePermission: 0400
      - objectName: db.json               # no secretKey: the whole secret as JSON
        secretPath: secret/data/demo/db
`;

/** A loopback port free right now (bao needs a number; a lost race is retried once). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** `err` with bao's dev banner lines (unseal key, root token) cut out, so no credential reaches the terminal. */
function scrubbed(err: unknown, rootToken: string): unknown {
  if (!(err instanceof Error)) return err;
  const message = err.message
    .replace(/^\s*(Unseal Key|Root Token):.*$/gm, '')
    .split(rootToken)
    .join('<root token>');
  return message === err.message ? err : new Error(message);
}

/** The running dev server: its address and an admin call with the root token. */
interface DemoBao {
  readonly address: string;
  call(method: string, path: string, body?: unknown): Promise<void>;
}

/** Starts `bao server -dev` as a session child on a free loopback port (retried once if the port was taken meanwhile). */
async function startBao(session: DemoSession, bao: BaoLocation, dir: string): Promise<DemoBao> {
  const rootToken = randomBytes(24).toString('hex');
  const config = join(dir, 'server.hcl');
  // Clustering off: otherwise the dev server also binds port + 1, which nobody reserved.
  await session.step(writeFile(config, 'disable_clustering = true\n'));
  // PATH and HOME only: no BAO_*/VAULT_* or proxy settings of the user's shell leak in;
  // -dev-no-store-token keeps the root token out of HOME.
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir };
  for (let attempt = 1; ; attempt++) {
    const port = await session.step(freeLoopbackPort());
    const args = [
      'server',
      '-dev',
      `-dev-root-token-id=${rootToken}`,
      `-dev-listen-address=127.0.0.1:${port}`,
      '-dev-no-store-token',
      `-config=${config}`,
    ];
    try {
      // The last thing dev mode logs: KV v2 at secret/ is ready for writes.
      await session.startProgram(bao.path, args, /secrets\.kv\.[^:]*: upgrading keys finished/, env);
    } catch (err) {
      if (attempt === 1 && err instanceof Error && /address already in use/.test(err.message)) continue;
      throw scrubbed(err, rootToken);
    }
    const address = `http://127.0.0.1:${port}`;
    return {
      address,
      async call(method, path, body) {
        const res = await session.step(
          fetch(`${address}/v1/${path}`, {
            method,
            headers: { 'X-Vault-Token': rootToken, 'Content-Type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(10_000),
          }),
        );
        const text = await session.step(res.text());
        if (!res.ok) throw new Error(`OpenBao ${method} ${path}: HTTP ${res.status} ${text.trim().slice(0, 300)}`);
      },
    };
  }
}

/** A JWT for the pod's service account and audience `vault`, signed RS256 with `privateKey` (10 minutes). */
export function signPodToken(privateKey: string, now = Math.floor(Date.now() / 1000)): string {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { iss: ISSUER, sub: SUBJECT, aud: ['vault'], iat: now, nbf: now, exp: now + 600, jti: randomUUID() };
  const input = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
}

/** The KV v2 secret, the policy, and JWT auth at auth/jwt trusting a key made now; returns the private key. */
async function configure(bao: DemoBao): Promise<string> {
  await bao.call('POST', 'secret/data/demo/db', { data: { username: 'demo', password: 'demo-vault-password-1' } });
  await bao.call('PUT', `sys/policies/acl/${ROLE}`, {
    policy: 'path "secret/data/demo/*" { capabilities = ["read"] }',
  });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  await bao.call('POST', 'sys/auth/jwt', { type: 'jwt' });
  await bao.call('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [publicKey], bound_issuer: ISSUER });
  await bao.call('POST', `auth/jwt/role/${ROLE}`, {
    role_type: 'jwt',
    bound_audiences: ['vault'],
    bound_subject: SUBJECT,
    user_claim: 'sub',
    policies: [ROLE],
    token_ttl: '10m',
  });
  return privateKey;
}

/** Where the vault part works: the class dir the driver reads, the providers' socket dir, the vault volume's target. */
export interface VaultDemoPaths {
  readonly classesDir: string;
  readonly providersDir: string;
  readonly target: string;
}

/**
 * The vault part's steps: OpenBao, the vault provider, a publish of demo-vault, the
 * files, versions, and the unpublish. Every wait goes through session.step (signals).
 */
export async function showVaultSteps(
  session: DemoSession,
  client: CsiClient,
  bao: BaoLocation,
  paths: VaultDemoPaths,
): Promise<void> {
  const dir = join(session.work, 'openbao');
  await session.step(mkdir(dir));
  step(`vault: starting OpenBao (bao server -dev, ${bao.path}, from ${bao.from})`);
  const server = await startBao(session, bao, dir);
  line(`listening on ${server.address}, in memory, with a random root token (not shown)`);
  const privateKey = await configure(server);
  line('KV v2 secret secret/demo/db (username, password); policy demo-role reads secret/data/demo/*');
  line(`JWT auth at auth/jwt: role ${ROLE}, audience vault, subject ${SUBJECT}, a key the demo made`);

  step('vault: starting the vault provider');
  const providerSocket = join(paths.providersDir, 'vault.sock');
  // Loopback only: proxy settings of the user's shell would send node-vault's requests away.
  const env = { ...process.env, HTTP_PROXY: '', HTTPS_PROXY: '', http_proxy: '', https_proxy: '' };
  await session.start(
    [
      'provider',
      'vault',
      `--endpoint=unix://${providerSocket}`,
      `--vault-addr=${server.address}`,
      `--hmac-key-file=${join(session.work, 'vault-hmac.key')}`,
    ],
    /provider started/,
    env,
  );
  await session.step(writeFile(join(paths.classesDir, 'demo-vault.yaml'), VAULT_CLASS));
  line(`serving ${providerSocket}; class ${VAULT_SPC} written to ${join(paths.classesDir, 'demo-vault.yaml')}:`);
  for (const l of VAULT_CLASS.split('\n').slice(1, -1)) line(`  ${l}`);

  step(`vault: NodePublishVolume for pod default/vault-pod, SecretProviderClass ${VAULT_SPC}`);
  line("the pod's token for audience vault: a JWT the demo signs, as kubelet would mint for tokenRequests");
  const ctx = inlineVolumeContext(
    { name: 'vault-pod', namespace: 'default', uid: randomUUID(), serviceAccountName: 'default' },
    VAULT_SPC,
  );
  ctx['csi.storage.k8s.io/serviceAccount.tokens'] = JSON.stringify({
    vault: { token: signPodToken(privateKey), expirationTimestamp: new Date(Date.now() + 600_000).toISOString() },
  });
  const started = performance.now();
  await session.step(client.publish(inlinePublishRequest(VAULT_VOLUME_ID, paths.target, ctx)));
  line(`published in ${(performance.now() - started).toFixed(1)} ms at ${paths.target}`);
  await session.step(showTree(paths.target));

  step('vault: what the pod reads');
  await session.step(showContents(paths.target, ['db-password', 'db.json']));
  step("vault: .metadata/versions.json (keyed HMAC of each object's settings and content)");
  await session.step(showVersions(paths.target));

  step('vault: NodeUnpublishVolume');
  await session.step(client.unpublish(VAULT_VOLUME_ID, paths.target));
  line(
    `target path removed: ${await lstat(paths.target).then(
      () => false,
      () => true,
    )}`,
  );
  line('OpenBao (all in memory) and the vault provider stop with the demo');
}
