// A real OpenBao server (the Vault API) for the vault provider's tests: `bao server -dev`
// from the openbao peer (test/peers/install.sh), in memory, unsealed, on loopback ports
// the kernel handed out, with a random root token, plus small admin helpers that call its
// HTTP API directly (so test setup does not depend on the client library under test).
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from './e2e-runtime.js';
import { makePeerDir, startPeerProcess, type PeerDir, type PeerProcess } from './peer-process.js';
import { peerBinary } from './peers.js';
import { makeTestPki, type TestPki } from './test-pki.js';

/** Options of startOpenBao. */
export interface OpenBaoOptions {
  /**
   * Adds a second listener serving TLS with a test CA's server certificate (the dev
   * listener stays plain HTTP for the admin helpers); `requireClientCert` makes it mTLS.
   */
  readonly tls?: boolean | { readonly requireClientCert?: boolean };
  /**
   * Writes every request and response to a file audit device (`auditLogPath`), to count
   * what a client sent (vault-audit.ts). Declared in the config: OpenBao 2.x refuses to
   * enable audit devices through its API.
   */
  readonly auditLog?: boolean;
}

/** The TLS listener of an OpenBao started with `tls`, and the test PKI behind it. */
export interface OpenBaoTls extends TestPki {
  /** https://127.0.0.1:<port> */
  readonly address: string;
  readonly requireClientCert: boolean;
}

/** A Vault API response body (the fields tests look at; `data` is the engine's payload). */
export interface VaultResponse {
  readonly lease_id: string;
  readonly renewable: boolean;
  readonly lease_duration: number;
  readonly data: Record<string, unknown> | null;
  readonly auth: { client_token: string; policies: string[]; lease_duration: number; renewable: boolean } | null;
  readonly warnings: string[] | null;
}

/** Options of one admin request. */
export interface RequestOptions {
  readonly body?: unknown;
  /** The token to send; default the root token, '' for none (logins). */
  readonly token?: string;
}

/** Admin calls against one namespace (the root namespace unless made by inNamespace). */
export interface OpenBaoAdmin {
  /** The namespace path these calls go to ('' for the root namespace). */
  readonly namespace: string;
  /** Calls /v1/<path>; resolves with the body (undefined for 204 or, on GET, 404); throws on other errors. */
  request(method: string, path: string, options?: RequestOptions): Promise<VaultResponse | undefined>;
  /** POST /v1/<path> with `body`. */
  write(path: string, body: unknown): Promise<VaultResponse | undefined>;
  /** GET /v1/<path>; undefined when there is nothing there. */
  read(path: string): Promise<VaultResponse | undefined>;
  /** Mounts a secrets engine of `type` at `path` (`options` e.g. `{ version: '1' }` for KV v1). */
  enableSecretsEngine(path: string, type: string, options?: Record<string, string>): Promise<void>;
  /** Enables an auth method of `type` at `path` (`auth/<path>/...`). */
  enableAuth(path: string, type: string): Promise<void>;
  /** Writes an ACL policy (HCL). */
  putPolicy(name: string, policy: string): Promise<void>;
  /** Creates the child namespace `name` and returns admin calls inside it. */
  createNamespace(name: string): Promise<OpenBaoAdmin>;
  /** Admin calls inside the (existing) child namespace `name`. */
  inNamespace(name: string): OpenBaoAdmin;
}

/** A running OpenBao dev server. */
export interface OpenBao extends OpenBaoAdmin {
  /** http://127.0.0.1:<port>, the dev listener. */
  readonly address: string;
  readonly rootToken: string;
  readonly tls?: OpenBaoTls;
  /** The file audit device's log (JSON lines), when started with `auditLog`. */
  readonly auditLogPath?: string;
  /** Stops the server and removes its temp dir (certificates, config). */
  stop(): Promise<void>;
}

/** Why OpenBao tests cannot run here (the peer is not installed), or undefined when they can. */
export function openBaoUnavailable(): string | undefined {
  return peerBinary('BAO') ? undefined : 'the openbao peer is not installed (run bash test/peers/install.sh openbao)';
}

function admin(address: string, rootToken: string, namespace: string): OpenBaoAdmin {
  const self: OpenBaoAdmin = {
    namespace,
    async request(method, path, options = {}) {
      const token = options.token ?? rootToken;
      const headers: Record<string, string> = {};
      if (token) headers['X-Vault-Token'] = token;
      if (namespace) headers['X-Vault-Namespace'] = namespace;
      if (options.body !== undefined) headers['Content-Type'] = 'application/json';
      const res = await fetch(`${address}/v1/${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status === 204 || (res.status === 404 && method === 'GET')) return undefined;
      if (!res.ok)
        throw new Error(
          `OpenBao ${method} ${namespace ? `${namespace}/` : ''}${path}: HTTP ${res.status} ${text.trim()}`,
        );
      return text ? (JSON.parse(text) as VaultResponse) : undefined;
    },
    write: (path, body) => self.request('POST', path, { body }),
    read: (path) => self.request('GET', path),
    async enableSecretsEngine(path, type, options) {
      await self.write(`sys/mounts/${path}`, { type, ...(options ? { options } : {}) });
    },
    async enableAuth(path, type) {
      await self.write(`sys/auth/${path}`, { type });
    },
    async putPolicy(name, policy) {
      await self.request('PUT', `sys/policies/acl/${name}`, { body: { policy } });
    },
    async createNamespace(name) {
      await self.write(`sys/namespaces/${name}`, {});
      return self.inNamespace(name);
    },
    inNamespace: (name) => admin(address, rootToken, namespace ? `${namespace}/${name}` : name),
  };
  return self;
}

/**
 * The server config added to dev mode: clustering off (otherwise every listener also binds
 * its port + 1, a port nobody reserved), and the TLS listener if asked for.
 */
function serverConfig(
  tls: { port: number; pki: TestPki; requireClientCert: boolean } | undefined,
  auditLogPath: string | undefined,
): string {
  const lines = ['disable_clustering = true'];
  if (auditLogPath)
    lines.push(
      'audit "file" "counting" {',
      '  options {',
      `    file_path = ${JSON.stringify(auditLogPath)}`,
      '  }',
      '}',
    );
  if (tls) {
    lines.push(
      'listener "tcp" {',
      `  address = "127.0.0.1:${tls.port}"`,
      `  tls_cert_file = ${JSON.stringify(tls.pki.serverCertPath)}`,
      `  tls_key_file = ${JSON.stringify(tls.pki.serverKeyPath)}`,
    );
    if (tls.requireClientCert) {
      lines.push(
        `  tls_client_ca_file = ${JSON.stringify(tls.pki.caCertPath)}`,
        '  tls_require_and_verify_client_cert = true',
      );
    }
    lines.push('}');
  }
  return `${lines.join('\n')}\n`;
}

async function healthy(address: string): Promise<boolean> {
  try {
    const res = await fetch(`${address}/v1/sys/health`, { signal: AbortSignal.timeout(2_000) });
    await res.text();
    return res.status === 200; // initialized, unsealed, active
  } catch {
    return false;
  }
}

/** One start of the server on fresh ports; 'port-taken' when a port went to someone else meanwhile. */
async function attempt(
  bao: string,
  dir: PeerDir,
  rootToken: string,
  pki: TestPki | undefined,
  requireClientCert: boolean,
  auditLogPath: string | undefined,
): Promise<{ proc: PeerProcess; address: string; tlsPort?: number } | 'port-taken'> {
  const port = await freePort();
  const tlsPort = pki ? await freePort() : undefined;
  const config = join(dir.path, 'server.hcl');
  await writeFile(
    config,
    serverConfig(pki && tlsPort ? { port: tlsPort, pki, requireClientCert } : undefined, auditLogPath),
  );
  const address = `http://127.0.0.1:${port}`;
  const proc = startPeerProcess(
    bao,
    [
      'server',
      '-dev',
      `-dev-root-token-id=${rootToken}`,
      `-dev-listen-address=127.0.0.1:${port}`,
      '-dev-no-store-token',
      `-config=${config}`,
    ],
    { cwd: dir.path, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir.path } },
  );
  try {
    await proc.until(() => healthy(address), `OpenBao's health endpoint at ${address}`, 30_000, 50);
    return { proc, address, tlsPort };
  } catch (err) {
    await proc.stop();
    if (/address already in use/.test(proc.output())) return 'port-taken';
    throw err;
  }
}

/** Starts an OpenBao dev server (KV v2 mounted at secret/); stop() it when done. */
export async function startOpenBao(options: OpenBaoOptions = {}): Promise<OpenBao> {
  const bao = peerBinary('BAO');
  if (!bao) throw new Error(openBaoUnavailable());
  const dir = await makePeerDir('ssc-openbao-');
  try {
    const rootToken = `root-${randomBytes(16).toString('hex')}`;
    const pki = options.tls ? await makeTestPki(dir.path) : undefined;
    const requireClientCert = typeof options.tls === 'object' && options.tls.requireClientCert === true;
    const auditLogPath = options.auditLog ? join(dir.path, 'audit.log') : undefined;
    let started = await attempt(bao, dir, rootToken, pki, requireClientCert, auditLogPath);
    if (started === 'port-taken') started = await attempt(bao, dir, rootToken, pki, requireClientCert, auditLogPath); // once: a race lost twice is a real problem
    if (started === 'port-taken') throw new Error('OpenBao could not bind a free port twice in a row');
    const { proc, address, tlsPort } = started;
    return {
      ...admin(address, rootToken, ''),
      address,
      rootToken,
      ...(pki && tlsPort ? { tls: { ...pki, address: `https://127.0.0.1:${tlsPort}`, requireClientCert } } : {}),
      ...(auditLogPath ? { auditLogPath } : {}),
      async stop() {
        await proc.stop();
        await dir.remove();
      },
    };
  } catch (err) {
    await dir.remove();
    throw err;
  }
}
