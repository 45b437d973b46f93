// The gRPC stacks bench/grpc-transport.ts compares, behind one small interface: a server of
// one echo method and a client making the benchmark's small call. Each stack is imported
// only when used, so a process holds only the stack its case needs. `frames` is not a gRPC
// stack but the floor of one on raw frames (h2-frames.ts), for the round-trip rows.
import type { UnaryMethod } from '../proto/grpc/method.js';

/** Which gRPC implementation a side uses. */
export type Stack = 'ours' | 'grpc-js' | 'frames';

const PATH = '/bench.Echo/Call';
const ECHO: UnaryMethod<Uint8Array, Uint8Array> = { path: PATH, request: { encode: (m) => m, decode: (b) => b }, response: { encode: (m) => m, decode: (b) => b } };
const REQUEST = Buffer.from('a small request of about a hundred bytes, like a Version call or a short NodeGetInfo answer......');

/** Serves the echo method on `socket` with `stack`; returns a function stopping the server. */
export async function serve(stack: Stack, socket: string): Promise<() => void> {
  if (stack === 'ours') {
    const { UnaryServer } = await import('../proto/grpc/unary-server.js');
    const server = new UnaryServer();
    server.add(ECHO, async (request) => request);
    await server.listen(socket);
    return () => server.forceShutdown();
  }
  if (stack === 'frames') return (await import('./h2-frames.js')).serveFrames(socket);
  const grpc = await import('@grpc/grpc-js');
  const server = new grpc.Server();
  const id = (b: Buffer) => b;
  server.register(PATH, (call: { request: Buffer }, cb: (e: null, r: Buffer) => void) => cb(null, call.request), id, id, 'unary');
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
  return () => server.forceShutdown();
}

/** A client of `socket` with `stack`, making the benchmark's small call. */
export async function caller(stack: Stack, socket: string): Promise<{ call(): Promise<unknown>; close(): void }> {
  if (stack === 'ours') {
    const { UnaryClient } = await import('../proto/grpc/unary-client.js');
    const client = new UnaryClient(socket);
    return { call: () => client.callRaw(PATH, REQUEST, { deadline: new Date(Date.now() + 10_000) }), close: () => client.close() };
  }
  if (stack === 'frames') return (await import('./h2-frames.js')).framesCaller(socket, PATH, REQUEST);
  const grpc = await import('@grpc/grpc-js');
  const client = new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure());
  const id = (b: Buffer) => b;
  return {
    call: () => new Promise((resolve, reject) => client.makeUnaryRequest(PATH, id, id, REQUEST, { deadline: Date.now() + 10_000 }, (e, r) => (e ? reject(e) : resolve(r)))),
    close: () => client.close(),
  };
}
