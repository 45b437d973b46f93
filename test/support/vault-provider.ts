// The real vault provider process (`secrets-store-csi provider vault`) for integration
// tests, a v1alpha1 client calling its Mount as the driver does, and JWT auth on a real
// OpenBao whose tokens the test signs itself: a stand-in for the service-account tokens
// kubelet mints (Kubernetes auth against a real kube-apiserver has its own test).
import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import * as grpc from '@grpc/grpc-js';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { loadProviderProto } from '../../proto/runtime/loader.js';
import type { OpenBaoAdmin } from './openbao.js';

/** How a Mount failed, as the provider answered it. */
export interface MountFailure {
  /** The gRPC status name: PERMISSION_DENIED, NOT_FOUND, … */
  readonly code: string;
  readonly details: string;
}

/** A running vault provider and a client to it. */
export interface VaultProviderProcess {
  readonly child: Child;
  readonly work: string;
  readonly providersDir: string;
  /** Mount with these attributes (a JSON object of strings) as the driver would call it. */
  mount(attributes: Record<string, string>, options?: MountOptions): Promise<MountResponse__Output>;
  /** The status a Mount fails with. */
  mountError(attributes: Record<string, string>, options?: MountOptions): Promise<MountFailure>;
  /** Its /metrics as `name{labels}` → value (started with `--health-addr=127.0.0.1:0`). */
  metrics(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

/** Prometheus text format as `name{labels}` → value (comments skipped; labels as written). */
export function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) values.set(m[1] as string, Number(m[2]));
  }
  return values;
}

/** Options of one Mount call. */
export interface MountOptions {
  /** What the driver has mounted: object id → version. */
  readonly current?: Record<string, string>;
  /** The call's deadline from now (default 20 s). */
  readonly deadlineMs?: number;
}

/** Starts `secrets-store-csi provider vault <args>` with `env` (nothing inherited but PATH and HOME unless given), its socket `vault.sock` in `providersDir` (default: in its temp dir). */
export async function startVaultProvider(args: readonly string[] = [], env: NodeJS.ProcessEnv = {}, options: { providersDir?: string } = {}): Promise<VaultProviderProcess> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-vault-'));
  const providersDir = options.providersDir ?? join(work, 'providers');
  await mkdir(providersDir, { recursive: true });
  let child: Child;
  try {
    child = await startCli(['provider', 'vault', `--endpoint=unix://${join(providersDir, 'vault.sock')}`, `--hmac-key-file=${join(work, 'hmac.key')}`, '--log-level=debug', ...args],
      /provider started/, { env: { PATH: process.env['PATH'], HOME: work, ...env } });
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
  const healthPort = /"healthPort":(\d+)/.exec(child.stderr())?.[1];
  const Client = loadProviderProto().v1alpha1.CSIDriverProvider;
  const client = new Client(`unix://${join(providersDir, 'vault.sock')}`, grpc.credentials.createInsecure());
  const mount = (attributes: Record<string, string>, options: MountOptions = {}) => new Promise<MountResponse__Output>((resolve, reject) => {
    client.Mount({
      attributes: JSON.stringify(attributes), secrets: '{}', permission: '420', target_path: '/var/lib/kubelet/pods/x/volumes/v',
      current_object_version: Object.entries(options.current ?? {}).map(([id, version]) => ({ id, version })),
    }, { deadline: new Date(Date.now() + (options.deadlineMs ?? 20_000)) }, (err, res) => (err ? reject(err) : resolve(res as MountResponse__Output)));
  });
  return {
    child, work, providersDir, mount,
    mountError: (attributes, options) => mount(attributes, options).then(() => { throw new Error('expected the Mount to fail'); }, (e: grpc.ServiceError) => {
      if (typeof e.code !== 'number') throw e;
      return { code: grpc.status[e.code] ?? String(e.code), details: e.details };
    }),
    async metrics() {
      if (healthPort === undefined) throw new Error('the vault provider was started without --health-addr');
      const res = await fetch(`http://127.0.0.1:${healthPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
      return parseMetrics(await res.text());
    },
    async stop() {
      client.close();
      await child.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** JWT auth on an OpenBao: tokens are signed here, as kubelet would sign service-account tokens. */
export interface JwtAuth {
  /** The auth mount path (`jwt`). */
  readonly mount: string;
  /** A token for service account `namespace/name` and `audience` (default `vault`), valid for 10 minutes. */
  token(serviceAccount?: string, audience?: string): string;
  /** The driver's `csi.storage.k8s.io/serviceAccount.tokens` attribute holding `token` for `audience`. */
  tokensAttribute(token: string, audience?: string): string;
}

/** Enables JWT auth at `mount` with a fresh RSA key, and a role `role` bound to audience `vault` with `policies`. */
export async function enableJwtAuth(bao: OpenBaoAdmin, mount: string, roles: Record<string, readonly string[]>): Promise<JwtAuth> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  await bao.enableAuth(mount, 'jwt');
  await bao.write(`auth/${mount}/config`, { jwt_validation_pubkeys: [publicKey], bound_issuer: 'https://kubernetes.default.svc' });
  for (const [role, policies] of Object.entries(roles)) {
    await bao.write(`auth/${mount}/role/${role}`, { role_type: 'jwt', bound_audiences: ['vault'], user_claim: 'sub', policies, token_ttl: '10m' });
  }
  return {
    mount,
    token(serviceAccount = 'default/app', audience = 'vault') {
      const now = Math.floor(Date.now() / 1000);
      const [ns, name] = serviceAccount.split('/');
      const claims = { iss: 'https://kubernetes.default.svc', sub: `system:serviceaccount:${ns}:${name}`, aud: [audience], iat: now, nbf: now, exp: now + 600, jti: randomBytes(8).toString('hex') };
      const input = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'test' }))}.${base64url(JSON.stringify(claims))}`;
      return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
    },
    tokensAttribute(token, audience = 'vault') {
      return JSON.stringify({ [audience]: { token, expirationTimestamp: new Date(Date.now() + 600_000).toISOString() } });
    },
  };
}

/** Pod attributes the driver adds (volume context) for pod `name` of service account `default/app`. */
export function podAttributes(name = 'web-0', serviceAccount = 'default/app'): Record<string, string> {
  const [ns, sa] = serviceAccount.split('/') as [string, string];
  return {
    'csi.storage.k8s.io/pod.name': name, 'csi.storage.k8s.io/pod.namespace': ns,
    'csi.storage.k8s.io/pod.uid': `uid-${name}`, 'csi.storage.k8s.io/serviceAccount.name': sa,
  };
}
