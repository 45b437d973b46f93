// Peers for testing the node:http2 gRPC transport (proto/grpc) on Unix sockets in temp
// dirs: @grpc/grpc-js as the independent gRPC implementation on the other side, test-only
// message codecs (raw bytes, JSON) so these tests do not depend on proto/wire, and raw
// node:http2 exchanges for what no well-behaved gRPC peer sends.
import * as grpc from '@grpc/grpc-js';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { MessageCodec, UnaryMethod } from '../../proto/grpc/method.js';

/** A message that is its bytes. */
export const rawBytes: MessageCodec<Buffer> = {
  encode: (message) => message,
  decode: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
};

/** A message that is JSON; decode throws on anything else, like a protobuf decoder on bad bytes. */
export function jsonCodec<T>(): MessageCodec<T> {
  return {
    encode: (message) => Buffer.from(JSON.stringify(message)),
    decode: (bytes) => JSON.parse(Buffer.from(bytes).toString('utf8')) as T,
  };
}

/** A test method at `path` with raw-bytes messages. */
export function bytesMethod(path: string): UnaryMethod<Buffer, Buffer> {
  return { path, request: rawBytes, response: rawBytes };
}

/** A temp dir for sockets, removed by `remove`. */
export interface SocketDir {
  readonly dir: string;
  path(name: string): string;
  remove(): Promise<void>;
}

/** A fresh temp dir for Unix sockets (short path: sun_path holds 107 bytes). */
export async function socketDir(): Promise<SocketDir> {
  const dir = await mkdtemp(join(tmpdir(), 'ssc-grpc-'));
  return { dir, path: (name) => join(dir, name), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A grpc-js server listening on `socketPath` with raw-bytes handlers. */
export async function startGrpcJsServer(
  socketPath: string,
  handlers: Record<string, grpc.handleUnaryCall<Buffer, Buffer>>,
  options: grpc.ServerOptions = {},
): Promise<grpc.Server> {
  const server = new grpc.Server(options);
  const id = (b: Buffer) => b;
  for (const [path, handler] of Object.entries(handlers)) server.register(path, handler, id, id, 'unary');
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  return server;
}

/** A grpc-js client of `socketPath` (its own subchannel pool, so tests do not share connections). */
export function grpcJsClient(socketPath: string, options: grpc.ChannelOptions = {}): grpc.Client {
  return new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, ...options });
}

/** How a grpc-js call ended. */
export interface GrpcJsResult {
  readonly code: number;
  readonly details: string;
  readonly value?: Buffer;
}

/** Starts a raw-bytes unary call with grpc-js; `result` settles with its outcome, never rejects. */
export function grpcJsCall(client: grpc.Client, path: string, request: Buffer, deadlineMs = 10_000): { call: grpc.ClientUnaryCall; result: Promise<GrpcJsResult> } {
  const id = (b: Buffer) => b;
  let call!: grpc.ClientUnaryCall;
  const result = new Promise<GrpcJsResult>((resolve) => {
    call = client.makeUnaryRequest(path, id, id, request, { deadline: Date.now() + deadlineMs }, (err, value) => {
      if (err) resolve({ code: err.code, details: err.details });
      else resolve({ code: 0, details: '', value: value as Buffer });
    });
  });
  return { call, result };
}

/** What came back on one raw HTTP/2 request. */
export interface RawExchange {
  readonly headers: IncomingHttpHeaders | undefined;
  readonly trailers: IncomingHttpHeaders | undefined;
  readonly data: Buffer;
  readonly rstCode: number | undefined;
}

/** The usual gRPC request headers for `path`, to alter per test. */
export function grpcRequestHeaders(path: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  return { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...extra };
}

/** Sends one HTTP/2 request of `body` chunks to `socketPath` on a fresh session and collects the answer. */
export function rawRequest(socketPath: string, headers: OutgoingHttpHeaders, body: Buffer[] = []): Promise<RawExchange> {
  return new Promise((resolve) => {
    const session = connect('http://localhost', { createConnection: () => netConnect(socketPath) });
    session.on('error', () => {});
    const stream = session.request(headers, { endStream: body.length === 0 });
    let responseHeaders: IncomingHttpHeaders | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('error', () => {});
    stream.on('response', (h, flags) => { responseHeaders = h; if (flags & 0x1) trailers = h; });
    stream.on('trailers', (t) => { trailers = t; });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('close', () => {
      session.close();
      resolve({ headers: responseHeaders, trailers, data: Buffer.concat(chunks), rstCode: stream.rstCode });
    });
    body.forEach((chunk, i) => (i === body.length - 1 ? stream.end(chunk) : stream.write(chunk)));
  });
}

/** A plain node:http2 server on `socketPath` answering each stream with `answer`: for responses no gRPC server sends. */
export async function startRawServer(socketPath: string, answer: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void): Promise<{ close(): Promise<void> }> {
  const server = createServer();
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (s: ServerHttp2Session) => { sessions.add(s); s.on('error', () => {}); s.once('close', () => sessions.delete(s)); });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => { stream.on('error', () => {}); answer(stream, headers); });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    close: () => new Promise<void>((resolve) => {
      for (const s of sessions) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A grpc-js server in its own process, to crash with SIGKILL: "echo" answers, "hang" never does. */
export interface ChildGrpcServer {
  readonly process: ChildProcess;
  /** Resolves once a call reached the server. */
  readonly called: Promise<void>;
  kill(): Promise<void>;
}

/** Starts a grpc-js server process on `socketPath` serving /test.Echo/Bytes; resolves when it listens. */
export async function spawnGrpcJsServer(socketPath: string, behaviour: 'echo' | 'hang'): Promise<ChildGrpcServer> {
  const grpcJs = pathToFileURL(createRequire(import.meta.url).resolve('@grpc/grpc-js')).href;
  const script = `
    import grpcModule from ${JSON.stringify(grpcJs)};
    const grpc = grpcModule.default ?? grpcModule;
    const server = new grpc.Server();
    const id = (b) => b;
    server.register('/test.Echo/Bytes', (call, cb) => {
      process.stdout.write('called\\n');
      if (${JSON.stringify(behaviour)} === 'echo') cb(null, Buffer.concat([Buffer.from('echo:'), call.request]));
    }, id, id, 'unary');
    server.bindAsync(${JSON.stringify(`unix://${socketPath}`)}, grpc.ServerCredentials.createInsecure(), (err) => {
      if (err) { process.stderr.write(String(err)); process.exit(1); }
      process.stdout.write('ready\\n');
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = (wanted: string) => new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => { seen += chunk.toString(); if (seen.includes(`${wanted}\n`)) resolve(); });
    child.once('exit', (code) => reject(new Error(`grpc-js server exited with ${code} before "${wanted}"`)));
  });
  const ready = lines('ready');
  const called = lines('called');
  called.catch(() => {});
  await ready;
  return {
    process: child,
    called,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
