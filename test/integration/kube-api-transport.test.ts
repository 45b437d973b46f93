import { expect } from 'chai';
import { once, setMaxListeners } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromKubeError } from '../../driver/k8s/api-errors.js';
import { KubeApi } from '../../driver/k8s/client/kube-api.js';
import type { ApiCredentials } from '../../driver/k8s/client/kubeconfig.js';
import type { KubeObject } from '../../driver/k8s/client/types.js';
import { WatchedCache } from '../../driver/k8s/watched-cache.js';
import { realSleep } from '../../lib/sleep.js';
import { createLogger } from '../../lib/logging/logger.js';

// A fake API server over plain HTTP: the transport's behaviour under conditions the real
// kube-apiserver (test/integration/kube-api.test.ts) cannot be made to produce on demand:
// answers that never come, a connection closed as it is reused, a path prefix of a proxy.

type Handler = (req: IncomingMessage, res: ServerResponse, nthOnConnection: number) => void;

interface FakeServer {
  readonly url: string;
  readonly requests: { url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

async function fakeServer(handler: Handler): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  const requests: FakeServer['requests'] = [];
  const perConnection = new WeakMap<Socket, number>();
  const server: Server = createServer((req, res) => {
    const n = (perConnection.get(req.socket) ?? 0) + 1;
    perConnection.set(req.socket, n);
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    handler(req, res, n);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
const api = (server: string, credentials: ApiCredentials = { type: 'token', token: 't' }, timeoutMs = 15_000) =>
  new KubeApi({ server: new URL(server), tls: { rejectUnauthorized: true }, credentials }, { timeoutMs });

describe('KubeApi transport against a fake API server (conditions kube-apiserver cannot be made to produce)', function () {
  this.timeout(10_000);
  const servers: FakeServer[] = [];
  const clients: KubeApi[] = [];
  async function serve(handler: Handler): Promise<FakeServer> {
    const s = await fakeServer(handler);
    servers.push(s);
    return s;
  }
  function client(...args: Parameters<typeof api>): KubeApi {
    const c = api(...args);
    clients.push(c);
    return c;
  }
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const s of servers.splice(0)) await s.close();
  });

  it("keeps the server URL's path (a cluster behind a proxy such as /k8s/clusters/<id>)", async () => {
    const server = await serve((_req, res) => json(res, 200, { metadata: { name: 'ns' } }));
    await client(`${server.url}/k8s/clusters/c-1/`).get('/api/v1/namespaces/ns', { limit: 1 });
    expect(server.requests.map((r) => r.url)).to.deep.equal(['/k8s/clusters/c-1/api/v1/namespaces/ns?limit=1']);
  });

  it('trims a token (a YAML block scalar ends in a newline) and refuses one no header can carry, leaving no timer behind', async () => {
    const server = await serve((_req, res) => json(res, 200, {}));
    await client(server.url, { type: 'token', token: 'abc\n' }).get('/api/v1/namespaces');
    expect(server.requests[0]?.authorization).to.equal('Bearer abc');
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const err = await client(server.url, { type: 'token', token: 'a\u0001b' })
      .get('/api/v1/namespaces')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(fromKubeError(err, 'list Namespaces').message).to.equal(
      'Kubernetes API call failed while trying to list Namespaces: the credentials hold a character an HTTP header cannot carry',
    );
    expect(timers()).to.equal(before);
    expect(server.requests).to.have.length(1);
  });

  it('serves requests while many watches are open (watches have their own connections)', async () => {
    const server = await serve((req, res) => {
      if (req.url?.includes('watch=true')) {
        res.writeHead(200);
        res.flushHeaders();
        return;
      } // a watch with no events yet
      json(res, 200, { items: [] });
    });
    const c = client(server.url);
    const stop = new AbortController();
    setMaxListeners(25, stop.signal);
    const watches = Array.from({ length: 20 }, () =>
      c.watch('/api/v1/pods', {}, () => undefined, stop.signal).catch((e: unknown) => e),
    );
    while (server.requests.length < 20) await new Promise((r) => setImmediate(r));
    expect(await c.get('/api/v1/pods')).to.deep.equal({ items: [] });
    stop.abort(new Error('test over'));
    expect((await Promise.all(watches)).map((e) => (e as Error).message)).to.deep.equal(Array(20).fill('test over'));
  });

  it('gives up on a request still waiting for a pooled connection when its signal aborts', async () => {
    const server = await serve(() => undefined); // never answers
    const c = client(server.url);
    const occupants = Array.from({ length: 16 }, () =>
      c.get('/api/v1/hang').then(
        () => 'occupant',
        () => 'occupant',
      ),
    );
    const queued = c.get('/api/v1/queued', undefined, AbortSignal.timeout(50)).then(
      () => 'queued',
      (e: Error) => `queued: ${e.name}`,
    );
    expect(await Promise.race([queued, ...occupants])).to.equal('queued: TimeoutError');
    expect(server.requests.map((r) => r.url)).to.not.include('/api/v1/queued');
  });

  it('sends a GET again when the server closed the reused connection, but never a POST', async () => {
    // The second request on a connection finds it closed, as when the server's idle timeout hit.
    const server = await serve((req, res, n) => {
      if (n === 2) {
        req.socket.destroy();
        return;
      }
      json(res, 200, { ok: req.method });
    });
    const c = client(server.url);
    expect(await c.get('/api/v1/a')).to.deep.equal({ ok: 'GET' });
    expect(await c.get('/api/v1/b')).to.deep.equal({ ok: 'GET' });
    expect(server.requests.map((r) => r.url)).to.deep.equal(['/api/v1/a', '/api/v1/b', '/api/v1/b']);
    const err = await c.create('/api/v1/c', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { code?: unknown }).code).to.equal('ECONNRESET');
  });

  it('fails an answer cut off mid-body, and a watch cut off mid-stream, as connection resets', async () => {
    const server = await serve((req, res) => {
      // Headers promise 100 bytes (or a watch stream), a few arrive, then the connection drops.
      res.writeHead(200, req.url?.includes('watch=true') ? {} : { 'Content-Length': '100' });
      res.write('{"items": [');
      setImmediate(() => req.socket.destroy());
    });
    const c = client(server.url);
    const cut = await c.get('/api/v1/pods').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((cut as { code?: unknown }).code).to.equal('ECONNRESET');
    const watch = await c
      .watch('/api/v1/pods', {}, () => undefined, new AbortController().signal)
      .then(
        () => 'ended',
        (e: unknown) => e,
      );
    expect((watch as { code?: unknown }).code).to.equal('ECONNRESET');
  });

  it('re-reads a rotated token file after a 401 and re-sends the same request once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ssc-token-'));
    try {
      const tokenFile = join(dir, 'token');
      await writeFile(tokenFile, 'old');
      const server = await serve((req, res) => {
        if (req.headers.authorization === 'Bearer new') {
          json(res, 200, { metadata: { name: 'x' } });
          return;
        }
        // kubelet rotated the token while this request was in flight.
        void writeFile(tokenFile, 'new').then(() =>
          json(res, 401, { kind: 'Status', code: 401, message: 'Unauthorized' }),
        );
      });
      expect(
        await client(server.url, { type: 'token-file', path: tokenFile }).get<KubeObject>('/api/v1/namespaces/x'),
      ).to.deep.equal({ metadata: { name: 'x' } });
      expect(server.requests.map((r) => r.authorization)).to.deep.equal(['Bearer old', 'Bearer new']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops a WatchedCache at once even while its list waits for an answer', async () => {
    const server = await serve(() => undefined); // never answers the list
    const cache = new WatchedCache<KubeObject>(
      client(server.url),
      { what: 'Thing', path: '/api/v1/things' },
      createLogger({ component: 'test', silent: true }),
      realSleep,
    );
    cache.start();
    while (server.requests.length === 0) await new Promise((r) => setImmediate(r));
    const started = Date.now();
    await cache.stop();
    // Well under the 15 s request timeout the list would otherwise have waited for.
    expect(Date.now() - started).to.be.below(5000);
  });
});
