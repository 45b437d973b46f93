import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { constants, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { deflateSync, gzipSync } from 'node:zlib';
import { frameMessage } from '../../proto/grpc/framing.js';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { UnaryClient } from '../../proto/grpc/unary-client.js';
import { rejection } from '../support/deferred.js';
import { socketDir, startGrpcJsServer, startRawServer, type SocketDir } from '../support/grpc-peers.js';

// UnaryClient (proto/grpc) against answers no gRPC server library sends on purpose: a plain
// node:http2 server plays a broken deployment (proxies, non-gRPC servers, half-written
// responses) and a compressing server (grpc-js servers never compress responses).

const PATH = '/test.Echo/Bytes';
const MAX = 64 * 1024;
const GRPC = { ':status': 200, 'content-type': 'application/grpc' };

type Answer = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

/** Answers with `headers`, the `frames`, then `trailers` (none: END_STREAM on the last DATA). */
function respond(headers: Record<string, string | number>, frames: Buffer[], trailers?: Record<string, string>): Answer {
  return (stream) => {
    stream.respond(headers, { waitForTrailers: trailers !== undefined });
    if (trailers) stream.once('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end(Buffer.concat(frames));
  };
}

function trailersOnly(headers: Record<string, string | number>): Answer {
  return (stream) => stream.respond(headers, { endStream: true });
}

describe('proto/grpc UnaryClient against raw HTTP/2 answers', function () {
  this.timeout(20_000);
  let dir: SocketDir;
  let socket: string;
  let answer: Answer;
  let requests: IncomingHttpHeaders[];
  let server: { close(): Promise<void> };
  let client: UnaryClient;

  beforeEach(async () => {
    dir = await socketDir();
    socket = dir.path('raw.sock');
    requests = [];
    server = await startRawServer(socket, (stream, headers) => { requests.push(headers); answer(stream, headers); });
    client = new UnaryClient(socket, { maxReceiveMessageLength: MAX });
  });
  afterEach(async () => {
    client.close();
    await server.close();
    await dir.remove();
  });

  const call = () => client.callRaw(PATH, Buffer.from('req'), { deadline: new Date(Date.now() + 5000) });

  it('sends the request headers grpc-go sends', async () => {
    answer = respond(GRPC, [frameMessage(Buffer.from('ok'))], { 'grpc-status': '0' });
    const custom = new UnaryClient(socket, { authority: 'provider.local', userAgent: 'ssc-test/1.0' });
    const deadline = new Date(Date.now() + 5000);
    await custom.callRaw(PATH, Buffer.from('req'), { deadline });
    custom.close();
    await call();
    const [sent, defaults] = requests as [IncomingHttpHeaders, IncomingHttpHeaders];
    expect({ method: sent[':method'], scheme: sent[':scheme'], path: sent[':path'], authority: sent[':authority'], te: sent['te'], type: sent['content-type'], ua: sent['user-agent'] })
      .to.deep.equal({ method: 'POST', scheme: 'http', path: PATH, authority: 'provider.local', te: 'trailers', type: 'application/grpc', ua: 'ssc-test/1.0' });
    expect(sent['grpc-timeout']).to.match(/^[0-9]{1,8}m$/);
    expect(Number(String(sent['grpc-timeout']).slice(0, -1))).to.be.within(4000, 5000);
    expect([defaults[':authority'], defaults['user-agent']]).to.deep.equal(['localhost', 'secrets-store-csi-grpc']);
  });

  const outcomes: [string, () => Answer, number, string | RegExp][] = [
    ['a Trailers-Only error, its message percent-decoded', () => trailersOnly({ ...GRPC, 'grpc-status': '5', 'grpc-message': 'secret %22db%22 n%C3%B6t found' }), GrpcStatus.NOT_FOUND, 'secret "db" nöt found'],
    ['HTTP 503 from a proxy (text/plain): the spec\'s mapping', () => respond({ ':status': 503, 'content-type': 'text/plain' }, [Buffer.from('upstream down')]), GrpcStatus.UNAVAILABLE, /503 \(Service Unavailable\)/],
    ['HTTP 401 without a content-type', () => trailersOnly({ ':status': 401 }), GrpcStatus.UNAUTHENTICATED, /401/],
    ['HTTP 404 with a gRPC content-type and no grpc-status', () => trailersOnly({ ':status': 404, 'content-type': 'application/grpc' }), GrpcStatus.UNIMPLEMENTED, /404 \(Not Found\)/],
    ['HTTP 200 text/html', () => respond({ ':status': 200, 'content-type': 'text/html' }, [Buffer.from('<html>')]), GrpcStatus.UNKNOWN, /unexpected content-type "text\/html"/],
    ['trailers without grpc-status (grpc-go: UNKNOWN)', () => respond(GRPC, [frameMessage(Buffer.from('x'))], { 'x-other': '1' }), GrpcStatus.UNKNOWN, /without a grpc-status/],
    ['no trailers at all', () => respond(GRPC, [frameMessage(Buffer.from('x'))]), GrpcStatus.INTERNAL, 'server closed the stream without sending trailers'],
    ['status 0 without a message', () => respond(GRPC, [], { 'grpc-status': '0' }), GrpcStatus.INTERNAL, /received no response message/],
    ['status 0 after two messages', () => respond(GRPC, [frameMessage(Buffer.from('a')), frameMessage(Buffer.from('b'))], { 'grpc-status': '0' }), GrpcStatus.INTERNAL, /but received another message/],
    ['status 0 after half a message', () => respond(GRPC, [frameMessage(Buffer.from('abcdef')).subarray(0, 7)], { 'grpc-status': '0' }), GrpcStatus.INTERNAL, /ended inside a message/],
    ['an over-size declaration, refused from the prefix', () => respond(GRPC, [Buffer.from([0, 0, 0x10, 0, 0])], { 'grpc-status': '0' }), GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (1048576 vs. ${MAX})`],
    ['a reset with CANCEL', () => (stream) => stream.close(constants.NGHTTP2_CANCEL), GrpcStatus.CANCELLED, /RST_STREAM with error code: 8/],
    ['a reset with ENHANCE_YOUR_CALM', () => (stream) => stream.close(constants.NGHTTP2_ENHANCE_YOUR_CALM), GrpcStatus.RESOURCE_EXHAUSTED, /error code: 11/],
    ['a compressed message with an unsupported grpc-encoding', () => respond({ ...GRPC, 'grpc-encoding': 'snappy' }, [frameMessage(Buffer.from('x'), true)], { 'grpc-status': '0' }), GrpcStatus.INTERNAL, /grpc-encoding "snappy"/],
    ['a gzip bomb: bounded by the limit', () => respond({ ...GRPC, 'grpc-encoding': 'gzip' }, [frameMessage(gzipSync(Buffer.alloc(8 * 1024 * 1024)), true)], { 'grpc-status': '0' }), GrpcStatus.RESOURCE_EXHAUSTED, /larger than max/],
  ];
  for (const [what, make, code, message] of outcomes) {
    it(what, async () => {
      answer = make();
      const err = await rejection(call());
      expect(err, String(err)).to.be.instanceOf(GrpcError);
      expect((err as GrpcError).code).to.equal(code);
      if (typeof message === 'string') expect((err as GrpcError).details).to.equal(message);
      else expect((err as GrpcError).details).to.match(message);
    });
  }

  for (const [name, compress] of [['gzip', gzipSync], ['deflate', deflateSync]] as const) {
    it(`decompresses a ${name} response`, async () => {
      const text = Buffer.from('compressible '.repeat(1000));
      answer = respond({ ...GRPC, 'grpc-encoding': name }, [frameMessage(compress(text), true)], { 'grpc-status': '0' });
      expect(Buffer.from(await call()).equals(text)).to.equal(true);
    });
  }

  it('sends a refused call again on a new connection, once', async () => {
    answer = (stream) => {
      if (requests.length === 1) stream.close(constants.NGHTTP2_REFUSED_STREAM);
      else respond(GRPC, [frameMessage(Buffer.from('second'))], { 'grpc-status': '0' })(stream, {});
    };
    expect(Buffer.from(await call()).toString()).to.equal('second');
    requests = [];
    answer = (stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM);
    const err = await rejection(call()) as GrpcError;
    expect([err.code, requests.length]).to.deep.equal([GrpcStatus.UNAVAILABLE, 2]);
  });
});

describe('proto/grpc UnaryClient and the process lifetime', function () {
  this.timeout(20_000);
  let dir: SocketDir;
  before(async () => { dir = await socketDir(); });
  after(async () => { await dir.remove(); });

  it('an idle connection does not keep the process alive; a pending call does', async () => {
    const socket = dir.path('life.sock');
    // The server answers late, so the client process idles with only its call pending.
    const server = await startGrpcJsServer(socket, { [PATH]: (c, cb) => setTimeout(() => cb(null, Buffer.concat([Buffer.from('late:'), c.request])), 300) });
    try {
      const module = new URL('../../proto/grpc/unary-client.js', import.meta.url).href;
      const script = `
        import { UnaryClient } from ${JSON.stringify(module)};
        const client = new UnaryClient(${JSON.stringify(socket)});
        const answer = await client.callRaw(${JSON.stringify(PATH)}, Buffer.from('x'), { deadline: new Date(Date.now() + 60000) });
        process.stdout.write(Buffer.from(answer).toString() + '\\n');
        // no client.close(): the idle connection must let the process end`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const limit = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(limit);
      expect([code, out]).to.deep.equal([0, 'late:x\n']);
    } finally {
      server.forceShutdown();
    }
  });
});
