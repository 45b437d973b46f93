// A stand-in for Azure Key Vault, Microsoft Entra ID and IMDS (test only). No Key Vault
// emulator or real Azure can run here (docs/conformance.md), so the real Azure SDK
// clients talk over real HTTPS to this server, which implements the documented contracts
// (Key Vault REST API 7.6, Entra v2.0 OAuth client credentials and workload identity
// federation, IMDS managed identity tokens) strictly. One HTTPS server on 127.0.0.1:0 routes
// by Host: `<vault>.vault.azure.net` (and the US Government / China suffixes) and the login
// hosts; clients keep the real names through providers/azure/connect-to.ts (`connectTo`).
// IMDS is plain HTTP on its own port (`imdsUrl`, for AZURE_POD_IDENTITY_AUTHORITY_HOST).
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CLOUDS, loginCloud, PUBLIC_CLOUD, type StandInCloud } from './clouds.js';
import { systemClock, type StandInClock } from './clock.js';
import { handleEntra } from './entra-api.js';
import { EntraDirectory, type IssuerKeys, TOKEN_EXCHANGE_AUDIENCE } from './entra-directory.js';
import { handleImds } from './imds-api.js';
import { handleKeyVault } from './keyvault-api.js';
import { throttled } from './keyvault-errors.js';
import { RequestLog, type RequestRecord, type StandInService } from './request-log.js';
import { standInPki } from './standin-pki.js';
import { TokenAuthority } from './token-authority.js';
import { type Principal, VaultStore } from './vault-store.js';

/** Options of `startAzureStandIn`. */
export interface AzureStandInOptions {
  /** Time for `created`/`updated`, token lifetimes and assertion checks (default: wall clock). */
  readonly clock?: StandInClock;
}

/** A running stand-in and the handles tests drive it with. */
export interface AzureStandIn {
  /** `--test-only-connect-to` value: every login host and every vault created so far → this server. */
  readonly connectTo: string;
  readonly caPath: string;
  readonly caPem: string;
  /** `http://127.0.0.1:<port>`, the value for AZURE_POD_IDENTITY_AUTHORITY_HOST. */
  readonly imdsUrl: string;
  /** The default tenant (vaults, apps and managed identities live there unless told). */
  readonly tenantId: string;
  /** Adds another tenant; returns its id. */
  addTenant(): string;
  /** The vault `name` (created on first use) in `tenantId` of `cloud`. */
  vault(name: string, options?: { readonly tenantId?: string; readonly cloud?: StandInCloud['name'] }): VaultStore;
  /** Registers an app (service principal) with an optional client secret. */
  registerApp(clientId: string, secret?: string, tenantId?: string): Principal;
  /** Adds a federated identity credential: tokens of `issuer` signed by `keys` with this `subject`. */
  federate(
    clientId: string,
    issuer: string,
    keys: IssuerKeys,
    subject: string,
    options?: { readonly tenantId?: string; readonly audience?: string },
  ): Principal;
  /** Adds a node managed identity: user-assigned with `clientId`, else system-assigned. */
  managedIdentity(clientId?: string): Principal;
  /** The next `count` Key Vault requests get 429 with `Retry-After: retryAfterSeconds`. */
  throttle(count: number, retryAfterSeconds: number): void;
  /** The request log so far. */
  requests(): RequestRecord[];
  clearRequests(): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-cache',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** Starts the stand-in (HTTPS for Key Vault and Entra, HTTP for IMDS). */
export async function startAzureStandIn(options: AzureStandInOptions = {}): Promise<AzureStandIn> {
  const clock = options.clock ?? systemClock;
  const [pki, authority] = await Promise.all([standInPki(), TokenAuthority.create(clock)]);
  const directory = new EntraDirectory();
  const tenantId = directory.addTenant();
  const vaults = new Map<string, { store: VaultStore; cloud: StandInCloud }>();
  const log = new RequestLog();
  let throttle = { left: 0, retryAfter: 0 };

  const record = (
    service: StandInService,
    req: IncomingMessage,
    url: URL,
    host: string,
    a: { status: number; operation: string; principal?: string },
  ) => {
    log.add({
      at: Date.now(),
      service,
      method: req.method ?? '',
      host,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: a.status,
      operation: a.operation,
      authorized: a.principal !== undefined,
      ...(a.principal ? { principal: a.principal } : {}),
    });
  };

  const https = createHttpsServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (req, res) => {
    void (async () => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      const url = new URL(req.url ?? '/', 'https://stand-in');
      const body = await readBody(req);
      const vault = vaults.get(host);
      if (vault !== undefined) {
        if (throttle.left > 0) {
          throttle.left -= 1;
          const t = throttled(throttle.retryAfter);
          record('keyvault', req, url, host, { status: t.status, operation: 'throttled' });
          return send(res, t.status, t.body, t.headers);
        }
        const a = handleKeyVault(
          {
            method: req.method ?? 'GET',
            path: url.pathname,
            query: url.searchParams,
            authorization: req.headers.authorization,
            body,
          },
          { vault: vault.store, cloud: vault.cloud, authority, clock },
        );
        record('keyvault', req, url, host, a);
        return send(res, a.status, a.body, a.headers);
      }
      const cloud = loginCloud(host);
      if (cloud !== undefined) {
        const a = handleEntra(req.method ?? 'GET', url.pathname, url.searchParams, body, cloud, {
          directory,
          authority,
          clock,
        });
        record('entra', req, url, host, a);
        return send(res, a.status, a.body);
      }
      record('keyvault', req, url, host, { status: 404, operation: 'unknownHost' });
      return send(res, 404, {
        error: { code: 'NotFound', message: `No stand-in vault or login host is named ${host}` },
      });
    })().catch((err: unknown) => {
      // A stand-in defect, never a real-service answer: log it so the test's counts show it.
      log.add({
        at: Date.now(),
        service: 'keyvault',
        method: req.method ?? '',
        host: req.headers.host ?? '',
        path: req.url ?? '',
        query: {},
        status: 500,
        operation: 'standInDefect',
        authorized: false,
      });
      send(res, 500, { error: { code: 'InternalError', message: String(err) } });
    });
  });
  const imds = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://imds');
    const header = req.headers['metadata'];
    const a = handleImds(
      req.method ?? 'GET',
      url.pathname,
      url.searchParams,
      Array.isArray(header) ? header[0] : header,
      directory,
      authority,
      PUBLIC_CLOUD,
    );
    record('imds', req, url, req.headers.host ?? '', a);
    send(res, a.status, a.body);
  });
  const [port, imdsPort] = await Promise.all([listen(https), listen(imds)]);

  return {
    get connectTo() {
      const hosts = [...CLOUDS.map((c) => c.loginHost), ...vaults.keys()];
      return hosts.map((h) => `${h}:443=127.0.0.1:${port}`).join(',');
    },
    caPath: pki.caCertPath,
    caPem: pki.caCertPem,
    imdsUrl: `http://127.0.0.1:${imdsPort}`,
    tenantId,
    addTenant: () => directory.addTenant(),
    vault(name, opts = {}) {
      if (!/^[A-Za-z][-A-Za-z0-9]{1,22}[A-Za-z0-9]$/.test(name))
        throw new Error(`stand-in: ${name} is not a valid vault name`);
      const cloud = CLOUDS.find((c) => c.name === (opts.cloud ?? 'AzurePublicCloud')) as StandInCloud;
      const host = `${name.toLowerCase()}.${cloud.vaultSuffix}`;
      const existing = vaults.get(host);
      if (existing) return existing.store;
      const store = new VaultStore(name.toLowerCase(), host, opts.tenantId ?? tenantId, clock);
      vaults.set(host, { store, cloud });
      return store;
    },
    registerApp: (clientId, secret, tenant = tenantId) => directory.registerApp(tenant, clientId, secret),
    federate: (clientId, issuer, keys, subject, opts = {}) =>
      directory.federate(
        opts.tenantId ?? tenantId,
        clientId,
        issuer,
        keys,
        subject,
        opts.audience ?? TOKEN_EXCHANGE_AUDIENCE,
      ),
    managedIdentity: (clientId) => directory.addManagedIdentity(tenantId, clientId),
    throttle(count, retryAfterSeconds) {
      throttle = { left: count, retryAfter: retryAfterSeconds };
    },
    requests: () => log.all(),
    clearRequests: () => log.clear(),
    async close() {
      https.closeAllConnections();
      imds.closeAllConnections();
      await Promise.all([new Promise((r) => https.close(r)), new Promise((r) => imds.close(r))]);
    },
  };
}
