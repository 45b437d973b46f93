import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { rm } from 'node:fs/promises';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { UnaryClient, type CallOptions } from '../../proto/grpc/unary-client.js';
import { deferred, rejection } from '../support/deferred.js';
import { bytesMethod, jsonCodec, socketDir, spawnGrpcJsServer, startGrpcJsServer, type SocketDir } from '../support/grpc-peers.js';

// UnaryClient (proto/grpc) calling @grpc/grpc-js servers, an independent gRPC implementation,
// on Unix sockets: in this process, and in a child process to crash (issue 9's outage).

const ECHO = bytesMethod('/test.Echo/Bytes');
const MAX = 64 * 1024;

function inMs(ms: number): CallOptions {
  return { deadline: new Date(Date.now() + ms) };
}

async function grpcFailure(p: Promise<unknown>): Promise<GrpcError> {
  const err = await rejection(p);
  expect(err, String(err)).to.be.instanceOf(GrpcError);
  return err as GrpcError;
}

describe('proto/grpc UnaryClient against a grpc-js server', function () {
  this.timeout(20_000);
  let dir: SocketDir;
  let socket: string;
  let server: grpc.Server | undefined;
  let client: UnaryClient;
  let handler: grpc.handleUnaryCall<Buffer, Buffer>;

  async function startServer(): Promise<void> {
    server = await startGrpcJsServer(socket, { [ECHO.path]: (call, cb) => handler(call, cb) });
  }

  beforeEach(async () => {
    dir = await socketDir();
    socket = dir.path('p.sock');
    handler = (call, cb) => cb(null, Buffer.concat([Buffer.from('echo:'), call.request]));
    await startServer();
    client = new UnaryClient(socket, { maxReceiveMessageLength: MAX, maxSendMessageLength: MAX });
  });
  afterEach(async () => {
    client.close();
    server?.forceShutdown();
    await dir.remove();
  });

  const call = (request: string | Buffer, options: CallOptions = inMs(10_000)) => client.call(ECHO, Buffer.from(request), options);

  it('makes a call', async () => {
    expect((await call('hi')).toString()).to.equal('echo:hi');
  });

  it('decodes with the method\'s codec; a response that does not decode is INTERNAL without its bytes', async () => {
    handler = (_call, cb) => cb(null, Buffer.from('{"hello":"pod"}'));
    const json = { path: ECHO.path, request: jsonCodec<{ name: string }>(), response: jsonCodec<{ hello: string }>() };
    expect(await client.call(json, { name: 'x' }, inMs(5000))).to.deep.equal({ hello: 'pod' });
    handler = (_call, cb) => cb(null, Buffer.from('{"token": "hunter2'));
    const err = await grpcFailure(client.call(json, { name: 'x' }, inMs(5000)));
    expect([err.code, err.details]).to.deep.equal([GrpcStatus.INTERNAL, 'could not parse the /test.Echo/Bytes response message']);
  });

  it('receives every status code with a non-ASCII, percent-laden, multi-line message intact', async () => {
    handler = (c, cb) => cb({ code: Number(c.request.toString()), details: `nöt föund: 100% ✓ 😀 ${c.request.toString()}\nline 2` });
    for (let code = 1; code <= 16; code++) {
      const err = await grpcFailure(call(String(code)));
      expect([err.code, err.details]).to.deep.equal([code, `nöt föund: 100% ✓ 😀 ${code}\nline 2`]);
    }
  });

  it('sends its deadline as grpc-timeout, and at the deadline fails DEADLINE_EXCEEDED and resets the stream', async () => {
    const seen = deferred<{ deadline: grpc.Deadline; cancelled: Promise<void> }>();
    handler = (c) => seen.resolve({ deadline: c.getDeadline(), cancelled: new Promise((resolve) => c.once('cancelled', () => resolve())) });
    const deadline = new Date(Date.now() + 300);
    const started = Date.now();
    const failed = grpcFailure(call('x', { deadline }));
    const { deadline: serverDeadline, cancelled } = await seen.promise;
    expect(Math.abs(new Date(serverDeadline as Date).getTime() - deadline.getTime())).to.be.below(250);
    const err = await failed;
    expect([err.code, err.details]).to.deep.equal([GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded']);
    expect(Date.now() - started).to.be.within(250, 2000);
    await cancelled; // the server saw the call end (its own timer races the client's RST_STREAM here)
  });

  it('fails a call whose deadline already passed without sending it', async () => {
    let called = false;
    handler = (_c, cb) => { called = true; cb(null, Buffer.alloc(0)); };
    const err = await grpcFailure(call('x', { deadline: new Date(Date.now() - 1) }));
    expect([err.code, err.details, called]).to.deep.equal([GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded', false]);
  });

  it('fails CANCELLED when its signal aborts, and the server sees the call cancelled', async () => {
    const cancelled = deferred<void>();
    const entered = deferred<void>();
    handler = (c) => { c.once('cancelled', () => cancelled.resolve()); entered.resolve(); };
    const abort = new AbortController();
    // A deadline far beyond the test's timeout: only the client's RST_STREAM can tell the server.
    const failed = grpcFailure(call('x', { deadline: new Date(Date.now() + 600_000), signal: abort.signal }));
    await entered.promise;
    abort.abort();
    const err = await failed;
    expect([err.code, err.details]).to.deep.equal([GrpcStatus.CANCELLED, 'Cancelled on client']);
    await cancelled.promise;
    const before = new AbortController();
    before.abort();
    expect((await grpcFailure(call('x', { deadline: new Date(Date.now() + 1000), signal: before.signal }))).code).to.equal(GrpcStatus.CANCELLED);
  });

  it('refuses a response over maxReceiveMessageLength with RESOURCE_EXHAUSTED "larger than max", and the connection stays usable', async () => {
    handler = (_c, cb) => cb(null, Buffer.alloc(MAX + 1));
    const err = await grpcFailure(call('x'));
    expect([err.code, err.details]).to.deep.equal([GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${MAX + 1} vs. ${MAX})`]);
    handler = (_c, cb) => cb(null, Buffer.alloc(MAX, 1));
    expect((await call('x')).length).to.equal(MAX);
  });

  it('refuses a request over maxSendMessageLength before sending it', async () => {
    let called = false;
    handler = (_c, cb) => { called = true; cb(null, Buffer.alloc(0)); };
    const err = await grpcFailure(call(Buffer.alloc(MAX + 1)));
    expect([err.code, err.details, called]).to.deep.equal([GrpcStatus.RESOURCE_EXHAUSTED, `Sent message larger than max (${MAX + 1} vs. ${MAX})`, false]);
  });

  it('gets UNIMPLEMENTED for a method the server does not serve', async () => {
    const err = await grpcFailure(client.callRaw('/test.Echo/Nope', Buffer.alloc(0), inMs(5000)));
    expect(err.code).to.equal(GrpcStatus.UNIMPLEMENTED);
    expect(err.details).to.match(/\/test\.Echo\/Nope/);
  });

  it('runs 100 calls at once on its one connection', async () => {
    let waiting: (() => void)[] = [];
    handler = (c, cb) => {
      waiting.push(() => cb(null, Buffer.concat([Buffer.from('echo:'), c.request])));
      if (waiting.length === 100) { for (const answer of waiting) answer(); waiting = []; }
    };
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => call(`n${i}`)));
    expect(answers.map((a) => a.toString())).to.deep.equal(Array.from({ length: 100 }, (_, i) => `echo:n${i}`));
  });

  it('calls at once a server restarted on the same path (gracefully or forcibly)', async () => {
    for (const stop of ['tryShutdown', 'forceShutdown'] as const) {
      expect((await call('before')).toString()).to.equal('echo:before');
      if (stop === 'tryShutdown') await new Promise<void>((resolve) => server?.tryShutdown(() => resolve()));
      else server?.forceShutdown();
      await rm(socket, { force: true });
      await startServer();
      expect((await call('after')).toString(), `after ${stop}`).to.equal('echo:after');
    }
  });

  it('fails UNAVAILABLE naming ENOENT and the socket when nothing is there', async () => {
    const none = new UnaryClient(dir.path('none.sock'));
    const err = await grpcFailure(none.callRaw(ECHO.path, Buffer.alloc(0), inMs(5000)));
    expect([err.code, err.details]).to.deep.equal([GrpcStatus.UNAVAILABLE, `cannot connect to ${dir.path('none.sock')}: ENOENT`]);
    none.close();
  });

  it('after a SIGKILLed server: UNAVAILABLE with ECONNREFUSED while it is down, and the first call after its restart succeeds', async () => {
    server?.forceShutdown();
    server = undefined;
    await rm(socket, { force: true });
    let child = await spawnGrpcJsServer(socket, 'echo');
    try {
      expect((await call('1')).toString()).to.equal('echo:1');
      await child.kill(); // the socket file stays behind, nothing listens on it
      // The first call may still go out on the old connection if the client has not yet read
      // its close (the server's exit and the socket's EOF race): UNAVAILABLE either way.
      const first = await grpcFailure(call('down'));
      expect(first.code).to.equal(GrpcStatus.UNAVAILABLE);
      expect(first.details).to.be.oneOf([`cannot connect to ${socket}: ECONNREFUSED`, `connection to ${socket} closed before the call ended`]);
      for (let i = 0; i < 3; i++) {
        const err = await grpcFailure(call('down'));
        expect([err.code, err.details]).to.deep.equal([GrpcStatus.UNAVAILABLE, `cannot connect to ${socket}: ECONNREFUSED`]);
      }
      await rm(socket, { force: true });
      child = await spawnGrpcJsServer(socket, 'echo');
      expect((await call('2')).toString()).to.equal('echo:2');
    } finally {
      await child.kill();
    }
  });

  it('fails UNAVAILABLE when the server dies mid-call', async () => {
    server?.forceShutdown();
    server = undefined;
    await rm(socket, { force: true });
    const child = await spawnGrpcJsServer(socket, 'hang');
    try {
      const failed = grpcFailure(call('x'));
      await child.called;
      await child.kill();
      const err = await failed;
      expect(err.code).to.equal(GrpcStatus.UNAVAILABLE);
      // A kill with the request unread resets the socket: then the errno is there too.
      expect(err.details).to.be.oneOf([`connection to ${socket} closed before the call ended`, `connection to ${socket} closed before the call ended: ECONNRESET`]);
    } finally {
      await child.kill();
    }
  });

  it('close() lets a call in flight finish and fails later calls with CANCELLED', async () => {
    const entered = deferred<() => void>();
    handler = (c, cb) => entered.resolve(() => cb(null, c.request));
    const inFlight = call('last');
    const answer = await entered.promise;
    client.close();
    answer();
    expect((await inFlight).toString()).to.equal('last');
    expect((await grpcFailure(call('x'))).code).to.equal(GrpcStatus.CANCELLED);
  });
});
