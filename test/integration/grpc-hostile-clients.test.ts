import { expect } from 'chai';
import { constants } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { csiProto } from '../../lib/grpc/grpc-proto.js';
import { deferred } from '../support/deferred.js';
import {
  driverLogSince,
  fileClass,
  mountsUnder,
  startDriverStack,
  whenDriverLogs,
  type DriverStack,
} from '../support/driver-stack.js';
import { grpcFrame, grpcRequestHeaders, rawRequest, rawSession } from '../support/grpc-peers.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';

// Whatever a client on the CSI socket does, the driver (grpc-js serving it) must neither
// crash nor stop serving, must not leave a call's work behind, and must not log what the
// client sent: each case ends with a well-behaved Probe answered by the same process.

const PUBLISH = '/csi.v1.Node/NodePublishVolume';
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
 * ('destroy'), or waits for the server to give up on it ('wait': it closes the connection
 * or sends GOAWAY).
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

describe("the driver's CSI socket against hostile clients (real driver process, grpc-js)", function () {
  this.timeout(30_000);
  let stack: DriverStack;
  let provider: ScriptedProvider;

  before(async () => {
    stack = await startDriverStack({
      classes: { 'scripted.yaml': fileClass('scripted', [{ objectName: 'x' }], 'scripted') },
    });
    provider = await startScriptedProvider(stack.providersDir, 'scripted', async () => responseWith([{ path: 'x' }]));
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  /** The same driver process answers a Probe, and nothing the hostile client sent is in its log. */
  async function stillServing(): Promise<void> {
    expect(await stack.client.probe()).to.equal(true);
    expect(stack.driver.process.exitCode).to.equal(null);
    expect(stack.driver.stderr()).not.to.include('hunter2');
  }

  /** The bytes of a NodePublishVolume of pod `pod` (class "scripted"), as kubelet sends them. */
  function publishRequest(pod: string): Buffer {
    return csiProto().Node.service.NodePublishVolume.requestSerialize(
      stack.request(stack.targetPath(pod), 'scripted', pod),
    );
  }

  const rawCases: [string, Buffer, 'end' | 'destroy' | 'wait'][] = [
    [
      'HTTP/1.1 instead of HTTP/2',
      Buffer.from(`POST ${PUBLISH} HTTP/1.1\r\nHost: x\r\nX-Token: hunter2\r\n\r\n`),
      'wait',
    ],
    ['garbage bytes', Buffer.from('\u0000\u00ffhunter2\u0001'.repeat(100), 'latin1'), 'wait'],
    ['half the preface, then hanging up', PREFACE.subarray(0, 10), 'end'],
    [
      'half a frame, then hanging up',
      Buffer.concat([PREFACE, EMPTY_SETTINGS, Buffer.from([0, 0, 100, 1, 4, 0, 0, 0, 1]), Buffer.from('hunter2')]),
      'destroy',
    ],
    [
      'a HEADERS frame that is not HPACK',
      Buffer.concat([
        PREFACE,
        EMPTY_SETTINGS,
        Buffer.from([0, 0, 16, 1, 5, 0, 0, 0, 1]),
        Buffer.from('\u00ff\u00ffhunter2hunter2', 'latin1').subarray(0, 16),
      ]),
      'wait',
    ],
    [
      'a DATA frame on a stream never opened',
      Buffer.concat([PREFACE, EMPTY_SETTINGS, Buffer.from([0, 0, 7, 0, 1, 0, 0, 0, 3]), Buffer.from('hunter2')]),
      'wait',
    ],
  ];
  for (const [what, bytes, end] of rawCases) {
    it(`survives ${what}`, async () => {
      await rawSocket(stack.socketPath, bytes, end);
      await stillServing();
    });
  }

  it('survives huge headers: one 100 KiB value, and 2000 headers', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) many[`x-h${i}`] = 'hunter2';
    for (const extra of [{ 'x-big': 'hunter2'.repeat(15_000) }, many]) {
      await rawRequest(stack.socketPath, grpcRequestHeaders('/csi.v1.Identity/Probe', extra), [
        grpcFrame(Buffer.alloc(0)),
      ]);
    }
    await stillServing();
  });

  for (const how of ['resets its stream', 'resets its stream with INTERNAL_ERROR', 'closes its socket'] as const) {
    it(`cancels the provider call and unmounts the new volume when kubelet ${how} mid-publish`, async () => {
      const pod = `cut-${how.replace(/\W+/g, '-')}`;
      const entered = deferred<void>();
      const providerCancelled = deferred<void>();
      provider.script = async (_request, cancelled) => {
        entered.resolve();
        await new Promise<void>((resolve) => cancelled.addEventListener('abort', () => resolve(), { once: true }));
        providerCancelled.resolve();
        return responseWith([{ path: 'x', contents: 'too late' }]);
      };
      const session = rawSession(stack.socketPath);
      const stream = session.request(grpcRequestHeaders(PUBLISH));
      stream.on('error', () => {});
      stream.end(grpcFrame(publishRequest(pod)));
      await entered.promise;
      if (how === 'resets its stream') stream.close(constants.NGHTTP2_CANCEL);
      else if (how === 'resets its stream with INTERNAL_ERROR') stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      else session.destroy();
      await providerCancelled.promise;
      await whenDriverLogs(stack, `the failed publish of ${pod}`, () =>
        driverLogSince(stack, 0).some(
          (e) => e['message'] === 'NodePublishVolume failed' && e['pod'] === `default/${pod}`,
        ),
      );
      expect(await mountsUnder(stack.targetPath(pod))).to.deep.equal([]);
      session.destroy();
      await stillServing();
    });
  }

  it('drops a request cut short by a closed socket without publishing', async () => {
    const before = provider.requests.length;
    const session = rawSession(stack.socketPath);
    const stream = session.request(grpcRequestHeaders(PUBLISH));
    stream.on('error', () => {});
    stream.write(grpcFrame(publishRequest('cut-short')).subarray(0, 9));
    await new Promise((resolve) => session.once('connect', resolve));
    session.destroy();
    await stillServing();
    expect(provider.requests.length).to.equal(before);
    expect(await mountsUnder(stack.targetPath('cut-short'))).to.deep.equal([]);
  });

  it('survives 1000 streams opened and reset at once', async () => {
    const session = rawSession(stack.socketPath);
    const closed: Promise<unknown>[] = [];
    for (let i = 0; i < 1000; i++) {
      const stream = session.request(grpcRequestHeaders('/csi.v1.Identity/Probe'));
      stream.on('error', () => {});
      stream.write(grpcFrame(Buffer.from('x')).subarray(0, 3));
      closed.push(new Promise((resolve) => stream.once('close', resolve)));
      stream.close(constants.NGHTTP2_CANCEL);
    }
    await Promise.all(closed);
    session.destroy();
    await stillServing();
  });

  it('answers an over-size request RESOURCE_EXHAUSTED, even with more data after it on the same stream', async () => {
    const r = await rawRequest(stack.socketPath, grpcRequestHeaders(PUBLISH), [
      grpcFrame(Buffer.alloc(5 * 1024 * 1024)),
      Buffer.from('trailing'),
    ]);
    expect(r.trailers?.['grpc-status'] ?? r.headers?.['grpc-status']).to.equal('8');
    await stillServing();
  });
});

describe("grpc-js's own log lines (real driver process, GRPC_VERBOSITY=DEBUG GRPC_TRACE=server)", function () {
  this.timeout(30_000);
  let stack: DriverStack | undefined;
  after(async () => {
    await stack?.stop();
  });

  it('go to the driver\'s JSON log as debug lines with message "gRPC", none as grpc-js\'s plain text', async () => {
    stack = await startDriverStack({ driverEnv: { GRPC_VERBOSITY: 'DEBUG', GRPC_TRACE: 'server' } });
    expect(await stack.client.probe()).to.equal(true);
    const s = stack;
    const traced = await whenDriverLogs(s, "grpc-js's trace of the bind", () =>
      driverLogSince(s, 0).find(
        (e) =>
          e['message'] === 'gRPC' && String(e['detail']).includes(`| server | (1) Successfully bound ${s.socketPath}`),
      ),
    );
    expect([traced['level'], traced['component']]).to.deep.equal(['debug', 'driver']);
    expect(
      s.driver
        .stderr()
        .split('\n')
        .filter((line) => /^[EID] \d{4}-/.test(line)),
    ).to.deep.equal([]);
  });
});
