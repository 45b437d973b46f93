import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { framesCaller, serveFrames } from '../../bench/h2-frames.js';
import type { UnaryMethod } from '../../proto/grpc/method.js';
import { UnaryClient } from '../../proto/grpc/unary-client.js';
import { UnaryServer } from '../../proto/grpc/unary-server.js';

// The floor rows of bench/grpc-transport.ts are only a floor if the fixed frames make a
// real gRPC call: our node:http2 stack must accept them from either side.
describe('bench/h2-frames: fixed HTTP/2 frames against proto/grpc', () => {
  const PATH = '/bench.Echo/Call';
  const ECHO: UnaryMethod<Uint8Array, Uint8Array> = { path: PATH, request: { encode: (m) => m, decode: (b) => b }, response: { encode: (m) => m, decode: (b) => b } };
  let dir: string;
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'ssc-h2-frames-')); });
  afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

  it('our UnaryServer answers calls made with fixed frames, in order on one connection', async () => {
    const server = new UnaryServer();
    const seen: string[] = [];
    server.add(ECHO, async (request) => { seen.push(Buffer.from(request).toString()); return Buffer.concat([Buffer.from('echo:'), request]); });
    await server.listen(join(dir, 's.sock'));
    const client = framesCaller(join(dir, 's.sock'), PATH, Buffer.from('ping'));
    try {
      for (let i = 0; i < 3; i++) {
        const body = await client.call();
        // a length-prefixed message, uncompressed
        expect(body[0]).to.equal(0);
        expect(body.readUInt32BE(1)).to.equal(9);
        expect(body.subarray(5).toString()).to.equal('echo:ping');
      }
      expect(seen).to.deep.equal(['ping', 'ping', 'ping']);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('our UnaryClient gets the echo of its request from the fixed-frame server', async () => {
    const stop = await serveFrames(join(dir, 'f.sock'));
    const client = new UnaryClient(join(dir, 'f.sock'));
    try {
      for (const text of ['one', 'two']) {
        const answer = await client.callRaw(PATH, Buffer.from(text), { deadline: new Date(Date.now() + 5000) });
        expect(Buffer.from(answer).toString()).to.equal(text);
      }
    } finally {
      client.close();
      stop();
    }
  });

  it('the fixed-frame client and server make a call with each other (the floor row)', async () => {
    const stop = await serveFrames(join(dir, 'ff.sock'));
    const client = framesCaller(join(dir, 'ff.sock'), PATH, Buffer.from('floor'));
    try {
      const body = await client.call();
      expect(body.subarray(5).toString()).to.equal('floor');
    } finally {
      client.close();
      stop();
    }
  });

  it('a call answered with an error (trailers only, no message) fails', async () => {
    const server = new UnaryServer();
    server.add(ECHO, async () => { throw new Error('refused'); });
    await server.listen(join(dir, 'e.sock'));
    const client = framesCaller(join(dir, 'e.sock'), PATH, Buffer.from('x'));
    try {
      let failure: unknown;
      await client.call().catch((err: unknown) => { failure = err; });
      expect(String(failure)).to.match(/without a response message/);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('a call fails instead of hanging when the server goes away', async () => {
    const server = new UnaryServer();
    server.add(ECHO, async (request) => request);
    await server.listen(join(dir, 'g.sock'));
    const client = framesCaller(join(dir, 'g.sock'), PATH, Buffer.from('x'));
    try {
      await client.call();
      server.forceShutdown();
      let failure: unknown;
      await client.call().catch((err: unknown) => { failure = err; });
      expect(String(failure)).to.match(/GOAWAY|closed|reset|EPIPE|without a response message/i);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
