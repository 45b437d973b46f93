import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProviderClient } from '../../driver/provider-client/client.js';
import { realSleep } from '../../lib/sleep.js';
import type { MountRequest } from '../../proto/gen/v1alpha1/MountRequest.js';
import { SscError } from '../../lib/errors.js';
import { providerProto } from '../../lib/grpc/grpc-proto.js';
import { createLogger } from '../../lib/logging/logger.js';
import { bindUnixSocket, shutdownServer } from '../../lib/grpc/unix-socket.js';
import { ProviderMetrics } from '../../providers/framework/provider-metrics.js';
import { createProviderServer } from '../../providers/framework/provider-server.js';
import type { SecretsProvider } from '../../providers/framework/provider.js';
import { deferred, rejection } from '../support/deferred.js';

// The driver's provider client (grpc-js) against grpc-js servers on Unix sockets in a temp
// dir, for what a provider does wrong on the wire; and the provider framework's server when
// the driver gives up on a call. Well-behaved peers: grpc-go-peers, interop and provider tests.

const MOUNT = '/v1alpha1.CSIDriverProvider/Mount';
const VERSION = '/v1alpha1.CSIDriverProvider/Version';
const REQUEST: MountRequest = {
  attributes: '{}',
  secrets: '{}',
  target_path: '/t',
  permission: '420',
  current_object_version: [],
};
const bytes = (b: Buffer): Buffer => b;
const silent = createLogger({ component: 'test', silent: true });

describe('the provider client against grpc-js servers that misbehave (Unix sockets in a temp dir)', function () {
  this.timeout(20_000);
  let dir: string;
  let server: grpc.Server | undefined;
  let client: ProviderClient | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-pc-'));
  });
  afterEach(async () => {
    client?.close();
    if (server) await shutdownServer(server, 100);
    server = client = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A server on `<dir>/p.sock` with raw-bytes handlers by path, and a client of it (`maxBytes`: --max-call-recv-msg-size). */
  async function serve(
    handlers: Record<string, grpc.handleUnaryCall<Buffer, Buffer>>,
    options: grpc.ServerOptions = {},
    maxBytes = 4 * 1024 * 1024,
  ): Promise<ProviderClient> {
    server = new grpc.Server(options);
    for (const [path, handler] of Object.entries(handlers)) server.register(path, handler, bytes, bytes, 'unary');
    await bindUnixSocket(server, join(dir, 'p.sock'));
    client = new ProviderClient({
      providerDirs: [dir],
      maxCallRecvMsgSize: maxBytes,
      timeoutMs: 5000,
      sleep: realSleep,
      logger: silent,
    });
    return client;
  }

  it("a socket serving another service: the provider's failure, FAILED_PRECONDITION, not the driver's", async () => {
    const c = await serve({ '/other.Service/Call': (_call, cb) => cb(null, Buffer.alloc(0)) });
    const err = (await rejection(c.mount('p', REQUEST))) as SscError;
    expect([err.kind, err.reason]).to.deep.equal(['failed-precondition', 'GRPCProviderError']);
    expect(err.message).to.match(/^provider "p" Mount failed: .*Mount/);
  });

  it('a Version answer that is not a VersionResponse: FAILED_PRECONDITION, without the bytes', async () => {
    // Field 9 with wire type 7, which protobuf does not have, then text.
    const c = await serve({
      [VERSION]: (_call, cb) => cb(null, Buffer.concat([Buffer.from([(9 << 3) | 7]), Buffer.from('hunter2')])),
    });
    const err = (await rejection(c.version('p'))) as SscError;
    expect([err.kind, err.reason]).to.deep.equal(['failed-precondition', 'GRPCProviderError']);
    expect(err.message).to.match(/^provider "p" Version failed: /);
    expect(err.message).not.to.include('hunter2');
  });

  it('a provider killed in the middle of a Mount: UNAVAILABLE naming the socket, after the retries', async () => {
    // A grpc-js server in a process of its own, SIGKILLed once the Mount reached it, as a crash or an OOM kill.
    const socket = join(dir, 'p.sock');
    const grpcJs = pathToFileURL(createRequire(import.meta.url).resolve('@grpc/grpc-js')).href;
    const script = `import m from ${JSON.stringify(grpcJs)}; const grpc = m.default ?? m; const s = new grpc.Server(); const id = (b) => b;
      s.register(${JSON.stringify(MOUNT)}, () => process.stdout.write('called\\n'), id, id, 'unary');
      s.bindAsync(${JSON.stringify(`unix://${socket}`)}, grpc.ServerCredentials.createInsecure(), (e) => process.stdout.write(e ? 'failed\\n' : 'ready\\n'));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const line = (wanted: string) =>
        new Promise<void>((resolve) => {
          let seen = '';
          child.stdout.on('data', (d: Buffer) => {
            seen += d.toString();
            if (seen.includes(`${wanted}\n`)) resolve();
          });
        });
      const called = line('called');
      await line('ready');
      client = new ProviderClient({
        providerDirs: [dir],
        maxCallRecvMsgSize: 4 << 20,
        timeoutMs: 5000,
        sleep: realSleep,
        logger: silent,
      });
      const failed = rejection(client.mount('p', REQUEST));
      await called;
      child.kill('SIGKILL');
      const err = (await failed) as SscError;
      expect([err.kind, err.reason]).to.deep.equal(['unavailable', 'ProviderUnavailable']);
      expect(err.message).to.include(`provider "p" Mount unavailable (socket ${socket})`);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('a compressed response that decompresses past --max-call-recv-msg-size: RESOURCE_EXHAUSTED ProviderResponseTooLarge', async () => {
    const big = providerProto().CSIDriverProvider.service.Mount.responseSerialize({
      object_version: [{ id: 'a', version: '1' }],
      files: [{ path: 'a', mode: 0o644, contents: Buffer.alloc(256 * 1024) }],
    });
    const c = await serve(
      { [MOUNT]: (_call, cb) => cb(null, big) },
      { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip },
      64 * 1024,
    );
    const err = (await rejection(c.mount('p', REQUEST))) as SscError;
    expect([err.kind, err.reason, err.message]).to.deep.equal([
      'resource-exhausted',
      'ProviderResponseTooLarge',
      `provider "p" Mount: response larger than --max-call-recv-msg-size (${64 * 1024} bytes)`,
    ]);
  });
});

describe("the provider framework's server when the driver gives up on a Mount (grpc-js on a Unix socket)", function () {
  this.timeout(20_000);

  for (const how of ['cancels', 'lets its deadline pass'] as const) {
    it(`counts a Mount the driver ${how} under its own reason, not as an internal error`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ssc-pf-'));
      const logged: string[] = [];
      const logger = createLogger({ component: 'test', silent: true });
      logger.error = (message) => {
        logged.push(String(message));
      };
      // A provider whose vault never answers: it gives up when the call's signal does, as the framework's helpers do.
      const waiting: SecretsProvider = {
        name: 'waiting',
        mount: (_req, ctx) =>
          new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
          ),
      };
      const metrics = new ProviderMetrics('waiting');
      const counted = deferred<void>();
      const mountServed = metrics.mountServed.bind(metrics);
      metrics.mountServed = (errorType, seconds) => {
        mountServed(errorType, seconds);
        counted.resolve();
      };
      const server = createProviderServer(waiting, logger, metrics);
      await bindUnixSocket(server, join(dir, 'waiting.sock'));
      const client = new ProviderClient({
        providerDirs: [dir],
        maxCallRecvMsgSize: 4 << 20,
        timeoutMs: 5000,
        sleep: realSleep,
        logger: silent,
      });
      try {
        const controller = new AbortController();
        const deadline = how === 'cancels' ? new Date(Date.now() + 5000) : new Date(Date.now() + 400);
        const call = rejection(
          client.mount(
            'waiting',
            { ...REQUEST, attributes: '{"objects":""}' },
            { signal: controller.signal, deadline },
          ),
        );
        if (how === 'cancels') setTimeout(() => controller.abort(new Error('kubelet went away')), 200);
        await call;
        // At a passed deadline the client's own cancel and the server's timer race: either word, never Internal.
        const reason = how === 'cancels' ? 'Cancelled' : '(Cancelled|DeadlineExceeded)';
        await counted.promise;
        expect(await metrics.registry.metrics()).to.match(
          new RegExp(`^provider_mount_total\\{provider="waiting",result="error",error_type="${reason}"\\} 1$`, 'm'),
        );
        expect(logged).to.deep.equal([]);
      } finally {
        client.close();
        await shutdownServer(server, 100);
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
