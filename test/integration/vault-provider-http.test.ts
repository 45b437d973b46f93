import { expect } from 'chai';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// The vault provider's HTTP edges against a real OpenBao and small local servers in front
// of it (port 0): redirects never carry a Vault token or a login's JWT to another origin,
// answers are read only up to --vault-max-response-bytes, and --vault-request-timeout
// bounds a whole call, a Vault that trickles its answer included.

/** What a local server received. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly token: string | undefined;
  readonly body: string;
}

/** A local HTTP server on 127.0.0.1:0 answering with `handle`, recording every request and open socket. */
interface LocalServer {
  readonly origin: string;
  readonly seen: Seen[];
  handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
  close(): Promise<void>;
}

async function localServer(): Promise<LocalServer> {
  const sockets = new Set<Socket>();
  const self: LocalServer = {
    origin: '',
    seen: [],
    handle: (_req, res) => {
      res.writeHead(500).end();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const token = req.headers['x-vault-token'];
      self.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        token: typeof token === 'string' ? token : undefined,
        body: body.toString('utf8'),
      });
      self.handle(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(self, { origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
  return self;
}

/** Sends the request on to `target` (an OpenBao), path rewritten by `path`, and its answer back. */
function forward(target: string, req: IncomingMessage, res: ServerResponse, body: Buffer, path = req.url ?? '/'): void {
  const headers = { ...req.headers };
  delete headers.host;
  const out = request(`${target}${path}`, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.writeHead(502).end());
  out.end(body);
}

describe('vault provider HTTP: redirects, answer size, request timeout (real OpenBao)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let jwt: JwtAuth;
  let provider: VaultProviderProcess;
  let front: LocalServer;
  let foreign: LocalServer;

  function attrs(
    vaultAddress: string,
    objects = '- {objectName: p, secretPath: secret/app/db, secretKey: password}\n',
  ): Record<string, string> {
    return {
      roleName: 'app',
      vaultAddress,
      vaultAuthMountPath: jwt.mount,
      objects,
      ...podAttributes(),
      'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token()),
    };
  }
  const isLogin = (req: IncomingMessage) => req.url === '/v1/auth/jwt/login';

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault provider HTTP tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao();
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'] });
    await bao.write('secret/data/app/db', { data: { password: 's3cret' } });
    provider = await startVaultProvider();
    front = await localServer();
    // Another origin: records what reaches it and refuses everything.
    foreign = await localServer();
    foreign.handle = (_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"errors":["permission denied"]}');
    };
  });
  beforeEach(() => {
    front.seen.length = 0;
    foreign.seen.length = 0;
  });
  after(async () => {
    await provider?.stop();
    await front?.close();
    await foreign?.close();
    await bao?.stop();
  });

  describe('redirects', () => {
    it("a login redirected (307) to another origin: not followed, the JWT never leaves; UNAVAILABLE naming the Location's origin", async () => {
      front.handle = (req, res) => {
        res.writeHead(307, { location: `${foreign.origin}${req.url}` }).end();
      };
      const failure = await provider.mountError(attrs(front.origin));
      expect(foreign.seen, 'requests that reached the other origin').to.deep.equal([]);
      expect(failure.code).to.equal('UNAVAILABLE');
      expect(failure.details).to.equal(
        `vault provider: Vault at ${front.origin} redirected login "auth/jwt/login" (HTTP 307) to another origin, ${foreign.origin}: ` +
          "not followed, as the Vault token or the login's service-account token would go there; set vaultAddress to the node that answers (the active one, or an address that reaches it)",
      );
      expect(front.seen.map((s) => s.method)).to.deep.equal(['POST']);
    });

    it('reads redirected to another origin after a real login: the Vault token never leaves', async () => {
      front.handle = (req, res, body) => {
        if (isLogin(req)) forward(bao.address, req, res, body);
        else res.writeHead(307, { location: `${foreign.origin}${req.url}` }).end();
      };
      const failure = await provider.mountError(attrs(front.origin));
      expect(foreign.seen, 'requests that reached the other origin').to.deep.equal([]);
      expect(failure.code).to.equal('UNAVAILABLE');
      expect(failure.details).to.include(
        `redirected mount-lookup "sys/internal/ui/mounts/secret/app/db" (HTTP 307) to another origin, ${foreign.origin}`,
      );
      // The token was issued and sent to the address the class named, and only there.
      expect(front.seen.filter((s) => s.token !== undefined)).to.have.length.greaterThan(0);
    });

    it("a redirect to the same origin is followed once, token included, as Vault's own client does; a second one is refused", async () => {
      front.handle = (req, res, body) => {
        const url = req.url ?? '';
        if (isLogin(req)) forward(bao.address, req, res, body);
        else if (url.startsWith('/v1/')) res.writeHead(307, { location: `/moved${url}` }).end();
        else if (url.startsWith('/moved/v1/secret/data/again')) res.writeHead(302, { location: `/moved${url}` }).end();
        else if (url.startsWith('/moved/')) forward(bao.address, req, res, body, url.slice('/moved'.length));
        else res.writeHead(404).end();
      };
      const ok = await provider.mount(attrs(front.origin));
      expect(ok.files.map((f) => f.contents.toString())).to.deep.equal(['s3cret']);
      expect(
        front.seen.filter((s) => s.url.startsWith('/moved/v1/secret/data/app/db')).map((s) => s.token !== undefined),
      ).to.deep.equal([true]);
      const twice = await provider.mountError(
        attrs(front.origin, '- {objectName: p, secretPath: secret/data/again/x}\n'),
      );
      expect(twice.code).to.equal('UNAVAILABLE');
      expect(twice.details).to.include(
        `redirected read "secret/data/again/x" (HTTP 302) a second time, to ${front.origin}: only one redirect is followed`,
      );
    });
  });

  describe('answer size', () => {
    it('an answer over the default 4 MiB (a real secret): RESOURCE_EXHAUSTED naming the path and the limit; one under it is read', async () => {
      await bao.write('secret/data/app/big', { data: { small: 'ok', filler: 'x'.repeat(5 * 1024 * 1024) } });
      await bao.write('secret/data/app/fits', { data: { small: 'ok', filler: 'x'.repeat(3 * 1024 * 1024) } });
      const fits = await provider.mount(
        attrs(bao.address, '- {objectName: s, secretPath: secret/app/fits, secretKey: small}\n'),
      );
      expect(fits.files.map((f) => f.contents.toString())).to.deep.equal(['ok']);
      const failure = await provider.mountError(
        attrs(bao.address, '- {objectName: s, secretPath: secret/app/big, secretKey: small}\n'),
      );
      expect(failure.code).to.equal('RESOURCE_EXHAUSTED');
      expect(failure.details).to.equal(
        `vault provider: object "s" (secretPath "secret/app/big"): Vault at ${bao.address} answered read "secret/data/app/big" with more than 4194304 bytes (--vault-max-response-bytes)`,
      );
    });
  });

  describe('with --vault-max-response-bytes=1048576 --vault-request-timeout=1s', () => {
    let limited: VaultProviderProcess;
    before(async () => {
      limited = await startVaultProvider(['--vault-max-response-bytes=1048576', '--vault-request-timeout=1s']);
    });
    after(async () => {
      await limited?.stop();
    });

    it('a Vault streaming a 32 MiB answer: cut past 1 MiB, the connection dropped, RESOURCE_EXHAUSTED', async () => {
      const total = 32 * 1024 * 1024;
      let sent = 0;
      let dropped: Promise<boolean> = Promise.resolve(false);
      front.handle = (req, res, body) => {
        if (!(req.url ?? '').startsWith('/v1/secret/data/app/stream')) return forward(bao.address, req, res, body);
        res.writeHead(200, { 'content-type': 'application/json' });
        dropped = new Promise((resolve) => res.on('close', () => resolve(sent < total)));
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (sent < total && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        res.write('{"data":{"data":{"filler":"');
        pump();
      };
      const failure = await limited.mountError(
        attrs(front.origin, '- {objectName: s, secretPath: secret/app/stream}\n'),
      );
      expect(failure.code).to.equal('RESOURCE_EXHAUSTED');
      expect(failure.details).to.include(
        'answered read "secret/data/app/stream" with more than 1048576 bytes (--vault-max-response-bytes)',
      );
      expect(await dropped, 'the provider closed the connection before the answer ended').to.equal(true);
    });

    // Each on a server of its own: a new address is a new identity, so the first call is a login.
    it("a hung Vault fails after the 1s request timeout, long before the Mount's deadline", async () => {
      const hung = await localServer();
      hung.handle = () => undefined; // never answers
      try {
        const started = Date.now();
        const failure = await limited.mountError(attrs(hung.origin), { deadlineMs: 20_000 });
        expect(failure.code).to.equal('DEADLINE_EXCEEDED');
        expect(failure.details).to.equal(
          `vault provider: Vault at ${hung.origin} did not answer login "auth/jwt/login" within 1000 ms`,
        );
        expect(Date.now() - started).to.be.below(5_000);
      } finally {
        await hung.close();
      }
    });

    it('a Vault that trickles its answer byte by byte: the timeout bounds the whole call, not the silence between bytes', async () => {
      const trickle = await localServer();
      const timers = new Set<NodeJS.Timeout>();
      trickle.handle = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => {
          if (!res.destroyed) res.write(' ');
        }, 100);
        timers.add(timer);
        res.on('close', () => clearInterval(timer));
      };
      try {
        const started = Date.now();
        const failure = await limited.mountError(attrs(trickle.origin), { deadlineMs: 20_000 });
        expect(failure.code).to.equal('DEADLINE_EXCEEDED');
        expect(failure.details).to.include('did not answer login "auth/jwt/login" within 1000 ms');
        expect(Date.now() - started).to.be.below(5_000);
      } finally {
        for (const t of timers) clearInterval(t);
        await trickle.close();
      }
    });
  });
});
