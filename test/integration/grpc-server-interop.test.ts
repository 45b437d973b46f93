import { expect } from 'chai';
import type * as grpc from '@grpc/grpc-js';
import { frameMessage } from '../../proto/grpc/framing.js';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { UnaryServer, type CallContext } from '../../proto/grpc/unary-server.js';
import { deferred } from '../support/deferred.js';
import { bytesMethod, grpcJsCall, grpcJsClient, grpcRequestHeaders, jsonCodec, rawRequest, socketDir, type SocketDir } from '../support/grpc-peers.js';

// UnaryServer (proto/grpc) answering @grpc/grpc-js, an independent gRPC implementation, on a
// Unix socket; raw node:http2 requests for what grpc-js never sends.

const BYTES = bytesMethod('/test.Echo/Bytes');
const JSON_METHOD = { path: '/test.Echo/Json', request: jsonCodec<{ name: string }>(), response: jsonCodec<{ hello: string }>() };
const MAX = 64 * 1024;

describe('proto/grpc UnaryServer against a grpc-js client', function () {
  this.timeout(20_000);
  let dir: SocketDir;
  let socket: string;
  let server: UnaryServer;
  let client: grpc.Client;
  let handler: (request: Buffer, ctx: CallContext) => Promise<Buffer>;
  let reported: [string, unknown][];

  async function start(options: { compression?: number } = {}): Promise<void> {
    server = new UnaryServer({ maxReceiveMessageLength: MAX, onError: (what, err) => reported.push([what, err]) });
    server.add(BYTES, (request, ctx) => handler(request, ctx));
    server.add(JSON_METHOD, async (request) => ({ hello: request.name }));
    await server.listen(socket);
    client = grpcJsClient(socket, options.compression === undefined ? {} : { 'grpc.default_compression_algorithm': options.compression });
  }

  beforeEach(async () => {
    dir = await socketDir();
    socket = dir.path('s.sock');
    reported = [];
    handler = async (request) => Buffer.concat([Buffer.from('echo:'), request]);
    await start();
  });
  afterEach(async () => {
    client.close();
    server.forceShutdown();
    await dir.remove();
  });

  const call = (request: Buffer | string, deadlineMs?: number, path = BYTES.path) => grpcJsCall(client, path, Buffer.from(request), deadlineMs);

  it('listen rejects on a path another server holds, and can be tried again once it is free', async () => {
    const second = new UnaryServer();
    second.add(BYTES, async () => Buffer.from('second'));
    const busy = await second.listen(socket).then(() => undefined, (err: NodeJS.ErrnoException) => err.code);
    expect(busy).to.equal('EADDRINUSE');
    await server.tryShutdown();
    await second.listen(socket);
    try {
      client.close();
      client = grpcJsClient(socket);
      expect((await call('x').result).value?.toString()).to.equal('second');
    } finally {
      await second.tryShutdown();
    }
  });

  it('answers a call', async () => {
    const r = await call('hello').result;
    expect([r.code, r.value?.toString()]).to.deep.equal([0, 'echo:hello']);
  });

  it('decodes the request and encodes the response with the method\'s codecs', async () => {
    const r = await call(JSON.stringify({ name: 'pod-1' }), undefined, JSON_METHOD.path).result;
    expect([r.code, r.value?.toString()]).to.deep.equal([0, '{"hello":"pod-1"}']);
  });

  it('sends every status code with a non-ASCII, percent-laden, multi-line message intact', async () => {
    handler = async (request) => { throw new GrpcError(Number(request.toString()), `nöt föund: 100% ✓ 😀 code ${request.toString()}\nsecond line`); };
    for (let code = 1; code <= 16; code++) {
      const r = await call(String(code)).result;
      expect([r.code, r.details]).to.deep.equal([code, `nöt föund: 100% ✓ 😀 code ${code}\nsecond line`]);
    }
  });

  it('answers a handler\'s unexpected error with INTERNAL and a generic text, never its message; tells onError', async () => {
    const boom = new Error('cannot log in with password hunter2');
    handler = async () => { throw boom; };
    const r = await call('x').result;
    expect([r.code, r.details]).to.deep.equal([GrpcStatus.INTERNAL, 'the server failed while handling /test.Echo/Bytes']);
    expect(reported).to.deep.equal([['handler of /test.Echo/Bytes failed', boom]]);
  });

  it('answers a request that does not decode with INTERNAL, never echoing its bytes', async () => {
    const r = await call('{"name": "hunter2', undefined, JSON_METHOD.path).result;
    expect(r.code).to.equal(GrpcStatus.INTERNAL);
    expect(r.details).to.equal('grpc: error unmarshalling request: could not parse the /test.Echo/Json request message');
  });

  it('gives the handler the client\'s deadline and aborts its signal when it passes', async () => {
    const seen = deferred<{ ctx: CallContext; at: number }>();
    const aborted = deferred<unknown>();
    handler = (_req, ctx) => {
      seen.resolve({ ctx, at: Date.now() });
      ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
      return new Promise(() => {});
    };
    const started = Date.now();
    const { result } = call('slow', 300);
    const { ctx } = await seen.promise;
    const left = (ctx.deadline as Date).getTime() - started;
    expect(left).to.be.within(150, 450);
    // The server's timer and grpc-js's own (its RST_STREAM) race: either aborts the signal.
    const reason = await aborted.promise;
    expect(reason).to.be.instanceOf(GrpcError);
    expect((reason as GrpcError).code).to.be.oneOf([GrpcStatus.DEADLINE_EXCEEDED, GrpcStatus.CANCELLED]);
    expect((await result).code).to.equal(GrpcStatus.DEADLINE_EXCEEDED);
  });

  it('answers DEADLINE_EXCEEDED itself when the grpc-timeout passes (a client without its own timer), aborting the handler', async () => {
    const aborted = deferred<unknown>();
    handler = (_req, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
      return new Promise(() => {});
    };
    const started = Date.now();
    const r = await rawRequest(socket, grpcRequestHeaders(BYTES.path, { 'grpc-timeout': '200m' }), [frameMessage(Buffer.from('x'))]);
    expect(Date.now() - started).to.be.within(150, 5000);
    expect([r.trailers?.['grpc-status'], r.trailers?.['grpc-message']]).to.deep.equal(['4', 'Deadline exceeded']);
    expect(((await aborted.promise) as GrpcError).code).to.equal(GrpcStatus.DEADLINE_EXCEEDED);
  });

  it('answers DEADLINE_EXCEEDED at once for a zero timeout, without running the handler', async () => {
    let ran = false;
    handler = async () => { ran = true; return Buffer.alloc(0); };
    const r = await rawRequest(socket, grpcRequestHeaders(BYTES.path, { 'grpc-timeout': '0n' }), [frameMessage(Buffer.from('x'))]);
    expect([r.trailers?.['grpc-status'], ran]).to.deep.equal(['4', false]);
  });

  it('aborts the handler\'s signal when the client cancels', async () => {
    const entered = deferred<void>();
    const aborted = deferred<unknown>();
    handler = (_req, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
      entered.resolve();
      return new Promise(() => {});
    };
    const { call: running, result } = call('x');
    await entered.promise;
    running.cancel();
    expect(((await aborted.promise) as GrpcError).code).to.equal(GrpcStatus.CANCELLED);
    expect((await result).code).to.equal(GrpcStatus.CANCELLED);
  });

  it('refuses a request over maxReceiveMessageLength with RESOURCE_EXHAUSTED and keeps serving', async () => {
    let ran = false;
    handler = async () => { ran = true; return Buffer.alloc(0); };
    const r = await call(Buffer.alloc(MAX + 1)).result;
    expect([r.code, r.details, ran]).to.deep.equal([GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${MAX + 1} vs. ${MAX})`, false]);
    handler = async () => Buffer.from('fine');
    expect((await call(Buffer.alloc(MAX)).result).value?.toString()).to.equal('fine');
  });

  it('answers an unknown method or service with UNIMPLEMENTED naming it (as grpc-go)', async () => {
    const method = await call('x', undefined, '/test.Echo/Nope').result;
    const service = await call('x', undefined, '/test.Other/Echo').result;
    expect([method.code, method.details]).to.deep.equal([GrpcStatus.UNIMPLEMENTED, 'unknown method Nope for service test.Echo']);
    expect([service.code, service.details]).to.deep.equal([GrpcStatus.UNIMPLEMENTED, 'unknown service test.Other']);
  });

  for (const [name, algorithm] of [['deflate', 1], ['gzip', 2]] as const) {
    it(`reads requests grpc-js compresses with ${name}, bounded by the limit after decompression`, async () => {
      client.close();
      client = grpcJsClient(socket, { 'grpc.default_compression_algorithm': algorithm });
      let got: Buffer | undefined;
      handler = async (request) => { got = request; return Buffer.from('ok'); };
      const text = Buffer.from('compressible '.repeat(1000));
      expect((await call(text).result).value?.toString()).to.equal('ok');
      expect(got?.equals(text)).to.equal(true);
      // A megabyte of zeros compresses far below the limit; it must still be refused.
      got = undefined;
      const bomb = await call(Buffer.alloc(1024 * 1024)).result;
      expect([bomb.code, got]).to.deep.equal([GrpcStatus.RESOURCE_EXHAUSTED, undefined]);
      expect(bomb.details).to.match(/larger than max after decompression/);
    });
  }

  it('runs 100 calls at once', async () => {
    let inFlight = 0;
    const all = deferred<void>();
    handler = async (request) => {
      if (++inFlight === 100) all.resolve();
      await all.promise; // a server that ran calls one at a time would never get here
      return Buffer.concat([Buffer.from('echo:'), request]);
    };
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => call(`n${i}`).result));
    expect(results.map((r) => r.value?.toString())).to.deep.equal(Array.from({ length: 100 }, (_, i) => `echo:n${i}`));
  });

  it('tryShutdown lets the calls in flight finish, refuses new connections, then resolves', async () => {
    const release = deferred<void>();
    let entered = 0;
    const allIn = deferred<void>();
    handler = async (request) => {
      if (++entered === 3) allIn.resolve();
      await release.promise;
      return Buffer.concat([Buffer.from('done:'), request]);
    };
    const calls = ['a', 'b', 'c'].map((x) => call(x).result);
    await allIn.promise;
    let shutDown = false;
    const shutdown = server.tryShutdown().then(() => { shutDown = true; });
    const late = grpcJsClient(socket);
    const refused = await grpcJsCall(late, BYTES.path, Buffer.from('late'), 5000).result;
    late.close();
    expect(refused.code).to.equal(GrpcStatus.UNAVAILABLE);
    expect(shutDown).to.equal(false);
    release.resolve();
    expect((await Promise.all(calls)).map((r) => r.value?.toString())).to.deep.equal(['done:a', 'done:b', 'done:c']);
    await shutdown;
  });

  it('tryShutdown also waits for a handler still running after its client went away', async () => {
    const release = deferred<void>();
    const aborted = deferred<void>();
    const entered = deferred<void>();
    let finished = false;
    handler = async (_req, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted.resolve());
      entered.resolve();
      await release.promise; // ignores its signal, as a rollback that must complete
      finished = true;
      return Buffer.alloc(0);
    };
    const { call: running, result } = call('x');
    await entered.promise;
    running.cancel();
    await aborted.promise;
    expect((await result).code).to.equal(GrpcStatus.CANCELLED);
    let shutDown = false;
    const shutdown = server.tryShutdown().then(() => { shutDown = true; });
    // Nothing signals that shutdown did not happen: give it a moment in which, with no call
    // left on any connection, it would otherwise resolve (it does within milliseconds).
    await Promise.race([shutdown, new Promise((resolve) => setTimeout(resolve, 300))]);
    expect(shutDown).to.equal(false);
    release.resolve();
    await shutdown;
    expect(finished).to.equal(true);
  });

  it('forceShutdown aborts running handlers and drops their calls', async () => {
    const entered = deferred<void>();
    const aborted = deferred<unknown>();
    handler = (_req, ctx) => {
      ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason));
      entered.resolve();
      return new Promise(() => {});
    };
    const { result } = call('x');
    await entered.promise;
    server.forceShutdown();
    expect(((await aborted.promise) as GrpcError).code).to.equal(GrpcStatus.CANCELLED);
    expect((await result).code).to.be.oneOf([GrpcStatus.CANCELLED, GrpcStatus.UNAVAILABLE]);
  });

  describe('requests grpc-js never sends (raw HTTP/2)', () => {
    const body = [frameMessage(Buffer.from('x'))];
    const cases: [string, Record<string, string>, Buffer[], string, string, RegExp][] = [
      ['a non-gRPC content-type: HTTP 415', { 'content-type': 'text/plain' }, body, '415', String(GrpcStatus.INVALID_ARGUMENT), /^invalid gRPC request content-type "text\/plain"$/],
      ['GET: HTTP 405', { ':method': 'GET' }, [], '405', String(GrpcStatus.INTERNAL), /:method "GET" which should be POST/],
      ['a malformed grpc-timeout: HTTP 400', { 'grpc-timeout': '1 hour' }, body, '400', String(GrpcStatus.INTERNAL), /^malformed grpc-timeout: "1 hour"$/],
      ['an unsupported grpc-encoding: UNIMPLEMENTED', { 'grpc-encoding': 'snappy' }, body, '200', String(GrpcStatus.UNIMPLEMENTED), /Decompressor is not installed for grpc-encoding "snappy"/],
      ['no message: INTERNAL (as grpc-go)', {}, [], '200', String(GrpcStatus.INTERNAL), /received no request message/],
      ['two messages: INTERNAL (as grpc-go)', {}, [frameMessage(Buffer.from('a')), frameMessage(Buffer.from('b'))], '200', String(GrpcStatus.INTERNAL), /received multiple request messages/],
      ['half a message: INTERNAL', {}, [frameMessage(Buffer.from('abcdef')).subarray(0, 8)], '200', String(GrpcStatus.INTERNAL), /ended inside a message/],
      ['a compressed flag without an encoding: INTERNAL', {}, [frameMessage(Buffer.from('x'), true)], '200', String(GrpcStatus.INTERNAL), /compressed flag set with identity/],
      ['a compressed flag of 2: INTERNAL', {}, [Buffer.from([2, 0, 0, 0, 0])], '200', String(GrpcStatus.INTERNAL), /unexpected payload format 2/],
      ['gzip bytes that do not inflate: INTERNAL', { 'grpc-encoding': 'gzip' }, [frameMessage(Buffer.from('nope'), true)], '200', String(GrpcStatus.INTERNAL), /could not decompress a gzip message/],
    ];
    for (const [what, extra, chunks, httpStatus, grpcStatus, message] of cases) {
      it(what, async () => {
        let ran = false;
        handler = async () => { ran = true; return Buffer.alloc(0); };
        const r = await rawRequest(socket, grpcRequestHeaders(BYTES.path, extra), chunks);
        expect([r.headers?.[':status'], r.headers?.['content-type'], r.trailers?.['grpc-status'], ran]).to.deep.equal([Number(httpStatus), 'application/grpc', grpcStatus, false]);
        expect(decodeURIComponent(String(r.trailers?.['grpc-message']))).to.match(message);
      });
    }

    it('answers with headers, one message and OK trailers', async () => {
      const r = await rawRequest(socket, grpcRequestHeaders(BYTES.path), [frameMessage(Buffer.from('hi'))]);
      expect([r.headers?.[':status'], r.headers?.['content-type'], r.headers?.['grpc-status'], r.trailers?.['grpc-status']]).to.deep.equal([200, 'application/grpc', undefined, '0']);
      expect(r.data).to.deep.equal(frameMessage(Buffer.from('echo:hi')));
    });
  });
});
