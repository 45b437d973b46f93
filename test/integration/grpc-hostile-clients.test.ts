import { expect } from 'chai';
import type * as grpc from '@grpc/grpc-js';
import { connect, constants } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { frameMessage } from '../../proto/grpc/framing.js';
import { UnaryServer, type CallContext } from '../../proto/grpc/unary-server.js';
import { deferred } from '../support/deferred.js';
import { bytesMethod, grpcJsCall, grpcJsClient, grpcRequestHeaders, rawRequest, socketDir, type SocketDir } from '../support/grpc-peers.js';

// Whatever a client on the socket does, UnaryServer (proto/grpc) must neither crash the
// process (an unhandled 'error' event would) nor keep a call pending: each test ends with
// a well-behaved grpc-js call being served, and afterEach's tryShutdown, which waits for
// every running call, resolving.

const ECHO = bytesMethod('/test.Echo/Bytes');
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

/** True once `received` (server-to-client HTTP/2 frames) holds a GOAWAY frame. */
function hasGoaway(received: Buffer): boolean {
  for (let at = 0; at + 9 <= received.length; at += 9 + received.readUIntBE(at, 3)) {
    if (received[at + 3] === 7) return true;
  }
  return false;
}

/**
 * Writes `bytes` on a raw connection to `socketPath` and ends it ('end'), drops it
 * ('destroy'), or waits for the server to give up on it ('wait': it closes the connection,
 * or sends GOAWAY — Node 20 then leaves the socket to the client, Node 24 closes it).
 */
function rawSocket(socketPath: string, bytes: Buffer, end: 'end' | 'destroy' | 'wait'): Promise<void> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const socket = netConnect(socketPath, () => {
      socket.write(bytes);
      if (end === 'end') socket.end();
      if (end === 'destroy') socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (hasGoaway(received)) socket.destroy();
    });
    socket.on('error', () => {});
    socket.once('close', () => resolve());
  });
}

describe('proto/grpc UnaryServer against hostile clients', function () {
  this.timeout(20_000);
  let dir: SocketDir;
  let socket: string;
  let server: UnaryServer;
  let client: grpc.Client;
  let handler: (request: Buffer, ctx: CallContext) => Promise<Buffer>;
  let reported: [string, unknown][];

  beforeEach(async () => {
    dir = await socketDir();
    socket = dir.path('h.sock');
    reported = [];
    handler = async (request) => Buffer.concat([Buffer.from('echo:'), request]);
    server = new UnaryServer({ maxReceiveMessageLength: 1024 * 1024, onError: (what, err) => reported.push([what, err]) });
    server.add(ECHO, (request, ctx) => handler(request, ctx));
    await server.listen(socket);
    client = grpcJsClient(socket);
  });
  afterEach(async () => {
    client.close();
    await server.tryShutdown(); // hangs (and fails the test) if a call was left pending
    await dir.remove();
  });

  async function stillServing(): Promise<void> {
    handler = async (request) => Buffer.concat([Buffer.from('echo:'), request]);
    const r = await grpcJsCall(client, ECHO.path, Buffer.from('ok'), 5000).result;
    expect([r.code, r.value?.toString()]).to.deep.equal([0, 'echo:ok']);
    for (const [what, err] of reported) {
      expect(`${what} ${String(err)} ${(err as Error)?.stack ?? ''}`, 'onError never sees request bytes').not.to.include('hunter2');
    }
  }

  const rawCases: [string, Buffer, 'end' | 'destroy' | 'wait'][] = [
    ['HTTP/1.1 instead of HTTP/2', Buffer.from('POST /test.Echo/Bytes HTTP/1.1\r\nHost: x\r\nX-Token: hunter2\r\n\r\n'), 'wait'],
    ['garbage bytes', Buffer.from('\u0000\u00ffhunter2\u0001'.repeat(100), 'latin1'), 'wait'],
    ['half the preface, then hanging up', PREFACE.subarray(0, 10), 'end'],
    ['half a frame, then hanging up', Buffer.concat([PREFACE, EMPTY_SETTINGS, Buffer.from([0, 0, 100, 1, 4, 0, 0, 0, 1]), Buffer.from('hunter2')]), 'destroy'],
    ['a HEADERS frame that is not HPACK', Buffer.concat([PREFACE, EMPTY_SETTINGS, Buffer.from([0, 0, 16, 1, 5, 0, 0, 0, 1]), Buffer.from('\u00ff\u00ffhunter2hunter2', 'latin1').subarray(0, 16)]), 'wait'],
    ['a DATA frame on a stream never opened', Buffer.concat([PREFACE, EMPTY_SETTINGS, Buffer.from([0, 0, 7, 0, 1, 0, 0, 0, 3]), Buffer.from('hunter2')]), 'wait'],
  ];
  for (const [what, bytes, end] of rawCases) {
    it(`survives ${what}`, async () => {
      await rawSocket(socket, bytes, end);
      await stillServing();
    });
  }

  it('survives huge headers: one 100 KiB value, and 2000 headers', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) many[`x-h${i}`] = 'hunter2';
    for (const extra of [{ 'x-big': 'hunter2'.repeat(15_000) }, many]) {
      const session = connect('http://localhost', { createConnection: () => netConnect(socket), maxSendHeaderBlockLength: 10_000_000 });
      session.on('error', () => {});
      const stream = session.request(grpcRequestHeaders(ECHO.path, extra));
      stream.on('error', () => {});
      stream.end(frameMessage(Buffer.from('x')));
      await new Promise((resolve) => stream.once('close', resolve));
      session.destroy();
    }
    await stillServing();
  });

  it('survives a reset in the middle of a large answer', async () => {
    handler = async () => Buffer.alloc(1024 * 1024, 7);
    const session = connect('http://localhost', { createConnection: () => netConnect(socket) });
    session.on('error', () => {});
    const stream = session.request(grpcRequestHeaders(ECHO.path));
    stream.on('error', () => {});
    stream.once('data', () => stream.close(constants.NGHTTP2_CANCEL));
    stream.end(frameMessage(Buffer.from('x')));
    await new Promise((resolve) => stream.once('close', resolve));
    session.close();
    await stillServing();
  });

  for (const how of ['resets its stream', 'resets its stream with INTERNAL_ERROR', 'closes its socket'] as const) {
    it(`aborts the handler when a client ${how} mid-call; the handler settling afterwards is harmless`, async () => {
      const entered = deferred<void>();
      const aborted = deferred<void>();
      const release = deferred<void>();
      const settled = deferred<void>();
      handler = async (_req, ctx) => {
        ctx.signal.addEventListener('abort', () => aborted.resolve());
        entered.resolve();
        await release.promise;
        settled.resolve();
        return Buffer.from('too late');
      };
      const session = connect('http://localhost', { createConnection: () => netConnect(socket) });
      session.on('error', () => {});
      const stream = session.request(grpcRequestHeaders(ECHO.path));
      stream.on('error', () => {});
      stream.end(frameMessage(Buffer.from('hunter2')));
      await entered.promise;
      if (how === 'resets its stream') stream.close(constants.NGHTTP2_CANCEL);
      else if (how === 'resets its stream with INTERNAL_ERROR') stream.close(constants.NGHTTP2_INTERNAL_ERROR); // an 'error' on the server's stream
      else session.destroy();
      await aborted.promise;
      release.resolve();
      await settled.promise;
      session.destroy();
      await stillServing();
      // A plain cancellation is no failure; a reset with an error code is worth a log line.
      const cutShort = reported.filter(([what]) => what === 'call to /test.Echo/Bytes cut short by its client').length;
      expect(cutShort).to.equal(how === 'resets its stream with INTERNAL_ERROR' ? 1 : 0);
    });
  }

  it('drops a request cut short by a closed socket without calling the handler', async () => {
    let called = false;
    handler = async () => { called = true; return Buffer.alloc(0); };
    const session = connect('http://localhost', { createConnection: () => netConnect(socket) });
    session.on('error', () => {});
    const stream = session.request(grpcRequestHeaders(ECHO.path));
    stream.on('error', () => {});
    stream.write(frameMessage(Buffer.from('hunter2 and more')).subarray(0, 9));
    await new Promise((resolve) => session.once('connect', resolve));
    session.destroy();
    await stillServing();
    expect(called).to.equal(false);
  });

  it('survives 1000 streams opened and reset at once', async () => {
    const session = connect('http://localhost', { createConnection: () => netConnect(socket) });
    session.on('error', () => {});
    const closed: Promise<unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      const stream = session.request(grpcRequestHeaders(ECHO.path));
      stream.on('error', () => {});
      stream.write(frameMessage(Buffer.from('x')).subarray(0, 3));
      closed.push(new Promise((resolve) => stream.once('close', resolve)));
      stream.close(constants.NGHTTP2_CANCEL);
    }
    await Promise.all(closed);
    session.destroy();
    await stillServing();
  });

  it('survives an over-size request followed by more data on the same stream', async () => {
    const r = await rawRequest(socket, grpcRequestHeaders(ECHO.path), [frameMessage(Buffer.alloc(2 * 1024 * 1024)), Buffer.from('trailing')]);
    expect(r.headers?.['grpc-status']).to.equal('8');
    await stillServing();
  });
});
