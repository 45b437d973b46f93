// The floor of any HTTP/2 framing of our own (issue 15): a unary gRPC echo peer on a raw
// Unix socket that writes fixed, precomputed frames and reads frames only as far as a unary
// echo needs. No HPACK decoding (the peer's header blocks are skipped), no stream states,
// flow control by one large connection WINDOW_UPDATE. It keeps some of the gRPC layer's
// per-call work above the framing (the same request headers as proto/grpc, a deadline timer,
// an async handler) but skips the rest: no routing by :path, no grpc-timeout or content-type
// check, the 5-byte message prefix echoed as is, grpc-status not read by the client. That is
// a few µs of a call's hundreds, so what it saves is mostly the framing's. It is not a usable
// gRPC stack: it bounds how much of a call's latency node:http2 costs, next to proto/grpc,
// in bench/grpc-transport.ts.
import { connect, createServer, type Socket } from 'node:net';
import { frameMessage } from '../proto/grpc/framing.js';
import { ACCEPTED_ENCODINGS, GRPC_CONTENT_TYPE } from '../proto/grpc/headers.js';
import { formatGrpcTimeout } from '../proto/grpc/timeout.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
/** Every call's deadline, as `grpc-timeout` and as a timer on both sides (proto/grpc's per-call work). */
const DEADLINE_MS = 10_000;

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK "literal header field without indexing" with a new name, no Huffman coding (names and values under 127 bytes). */
function literal(name: string, value: string): Buffer {
  if (name.length >= 127 || value.length >= 127) throw new Error('fixed header fields are shorter than 127 bytes');
  return Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
}

/** An HPACK literal without indexing whose name is the static table's entry `index` (under 15). */
function literalIndexedName(index: number, value: string): Buffer {
  if (index >= 15 || value.length >= 127) throw new Error('fixed header fields are shorter than 127 bytes');
  return Buffer.concat([Buffer.from([index, value.length]), Buffer.from(value)]);
}

function windowUpdate(increment: number): Buffer {
  const body = Buffer.alloc(4);
  body.writeUInt32BE(increment);
  return frame(WINDOW_UPDATE, 0, 0, body);
}

/** Calls `onFrame` for every whole frame that arrives on `socket` (after `skip` bytes of preface). */
function readFrames(socket: Socket, skip: number, onFrame: (type: number, flags: number, stream: number, payload: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  let toSkip = skip;
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    if (toSkip > 0) {
      const n = Math.min(toSkip, pending.length);
      pending = pending.subarray(n);
      toSkip -= n;
    }
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const type = pending[3] as number;
      const flags = pending[4] as number;
      const stream = pending.readUInt32BE(5) & 0x7fffffff;
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === SETTINGS && (flags & ACK) === 0) socket.write(frame(SETTINGS, ACK, 0));
      onFrame(type, flags, stream, payload);
    }
  });
}

/** Serves an echo of every request on `socket`: one write of response headers, DATA and trailers. */
export function serveFrames(socket: string): Promise<() => void> {
  const responseHeaders = Buffer.concat([Buffer.from([0x88]), literal('content-type', GRPC_CONTENT_TYPE)]); // :status 200
  const trailers = literal('grpc-status', '0');
  const server = createServer((conn) => {
    conn.write(Buffer.concat([frame(SETTINGS, 0, 0), windowUpdate(0x7fff0000)]));
    const bodies = new Map<number, Buffer[]>();
    readFrames(conn, PREFACE.length, (type, flags, stream, payload) => {
      if (type !== DATA) return;
      const parts = bodies.get(stream) ?? [];
      parts.push(Buffer.from(payload));
      bodies.set(stream, parts);
      if ((flags & END_STREAM) === 0) return;
      bodies.delete(stream);
      const deadline = setTimeout(() => conn.destroy(), DEADLINE_MS);
      void Promise.resolve(Buffer.concat(parts)).then((echo) => { // the handler
        clearTimeout(deadline);
        conn.write(Buffer.concat([frame(HEADERS, END_HEADERS, stream, responseHeaders), frame(DATA, 0, stream, echo),
          frame(HEADERS, END_HEADERS | END_STREAM, stream, trailers)]));
      });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve(() => server.close()));
  });
}

/** A client making unary calls to `path` on `socket` with fixed frames; a call resolves with the response's DATA bytes. */
export function framesCaller(socket: string, path: string, request: Uint8Array): { call(): Promise<Buffer>; close(): void } {
  const conn = connect(socket);
  conn.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0), windowUpdate(0x7fff0000)]));
  const headerBlock = Buffer.concat([Buffer.from([0x83, 0x86]), literalIndexedName(4, path), literalIndexedName(1, 'localhost'), // POST, http
    literal('grpc-timeout', formatGrpcTimeout(DEADLINE_MS)), literal('content-type', GRPC_CONTENT_TYPE), literal('te', 'trailers'),
    literal('user-agent', 'secrets-store-csi-grpc'), literal('grpc-accept-encoding', ACCEPTED_ENCODINGS)]);
  const body = frameMessage(request);
  const calls = new Map<number, { parts: Buffer[]; resolve(b: Buffer): void; reject(e: Error): void }>();
  const failAll = (why: string) => {
    const failed = [...calls.values()];
    calls.clear();
    for (const call of failed) call.reject(new Error(why));
  };
  conn.on('error', (err) => failAll(err.message));
  conn.on('close', () => failAll('connection closed'));
  let nextStream = 1;
  readFrames(conn, 0, (type, flags, stream, payload) => {
    if (type === GOAWAY) return failAll('the server sent GOAWAY');
    const call = calls.get(stream);
    if (call !== undefined && type === RST_STREAM) {
      calls.delete(stream);
      return call.reject(new Error(`the server reset stream ${stream}`));
    }
    if (call === undefined) return;
    if (type === DATA) call.parts.push(Buffer.from(payload));
    if ((type === DATA || type === HEADERS) && (flags & END_STREAM) !== 0) {
      calls.delete(stream);
      // Trailers are not decoded: an answer without a message is the server's error (trailers only).
      if (call.parts.length === 0) call.reject(new Error(`stream ${stream} ended without a response message`));
      else call.resolve(Buffer.concat(call.parts));
    }
  });
  return {
    call: () => new Promise((resolve, reject) => {
      if (conn.destroyed) return reject(new Error('connection closed'));
      const stream = nextStream;
      nextStream += 2;
      const deadline = setTimeout(() => { calls.delete(stream); reject(new Error(`no answer on stream ${stream} in ${DEADLINE_MS} ms`)); }, DEADLINE_MS);
      calls.set(stream, { parts: [], resolve: (b) => { clearTimeout(deadline); resolve(b); }, reject: (e) => { clearTimeout(deadline); reject(e); } });
      conn.write(Buffer.concat([frame(HEADERS, END_HEADERS, stream, headerBlock), frame(DATA, END_STREAM, stream, body)]));
    }),
    close: () => conn.end(),
  };
}
