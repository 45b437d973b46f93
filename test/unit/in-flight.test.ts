import { expect } from 'chai';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirMounter } from '../../driver/volume/mounter.js';
import { VolumePublisher } from '../../driver/volume/publisher.js';
import { TargetLocks } from '../../driver/volume/target-locks.js';
import { GrpcError, GrpcStatus } from '../../proto/grpc/status.js';
import { SscError } from '../../proto/runtime/errors.js';
import { InFlightCalls } from '../../proto/runtime/in-flight.js';
import { createLogger } from '../../proto/runtime/logger.js';
import { unary } from '../../proto/runtime/unary.js';

const logger = createLogger({ component: 'test', silent: true });

/** A server call's context (no deadline, never cancelled) and what the adapter answered: the response or the GrpcError. */
function fakeCall(): { call: { signal: AbortSignal; deadline: undefined }; answer: (p: Promise<unknown>) => Promise<{ err: GrpcError | null; res: unknown }> } {
  return {
    call: { signal: new AbortController().signal, deadline: undefined },
    answer: (p) => p.then((res) => ({ err: null, res }), (err: unknown) => ({ err: err as GrpcError, res: undefined })),
  };
}

describe('InFlightCalls', () => {
  it('cancels running calls with UNAVAILABLE ShuttingDown and waits for their cleanup', async () => {
    const calls = new InFlightCalls('driver');
    const cleanedUp: string[] = [];
    const handler = unary('Slow', async (_req: unknown, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      await Promise.resolve();
      cleanedUp.push('rolled back');
      throw ctx.signal.reason;
    }, logger, undefined, calls);
    const { call, answer } = fakeCall();
    const answered = answer(handler({}, call));
    expect(calls.size).to.equal(1);
    expect(await calls.cancelAll(60_000)).to.equal(true);
    // cancelAll returned only after the handler's cleanup ran.
    expect(cleanedUp).to.deep.equal(['rolled back']);
    const { err } = await answered;
    expect(err?.code).to.equal(GrpcStatus.UNAVAILABLE);
    expect(err?.details).to.equal('the driver is shutting down and cancelled this call; it can be retried');
    expect(calls.size).to.equal(0);
  });

  it('refuses calls that arrive after shutdown began, without running the handler', async () => {
    const calls = new InFlightCalls('driver');
    await calls.cancelAll(0);
    let ran = false;
    const handler = unary('Any', async () => { ran = true; return {}; }, logger, undefined, calls);
    const { call, answer } = fakeCall();
    const answered = answer(handler({}, call));
    expect((await answered).err?.code).to.equal(GrpcStatus.UNAVAILABLE);
    expect(ran).to.equal(false);
  });

  it('gives up waiting after the timeout and says so', async () => {
    const calls = new InFlightCalls('driver');
    calls.track(new Promise(() => {}));
    expect(await calls.cancelAll(1)).to.equal(false);
  });

  it('leaves nothing attached to the shutdown signal once a call ended', async () => {
    const calls = new InFlightCalls('driver');
    let seen: AbortSignal | undefined;
    const handler = unary('Quick', async (_req: unknown, ctx) => { seen = ctx.signal; return {}; }, logger, undefined, calls);
    const { call, answer } = fakeCall();
    const answered = answer(handler({}, call));
    expect((await answered).err).to.equal(null);
    await new Promise((resolve) => setImmediate(resolve));
    await calls.cancelAll(0);
    expect(seen?.aborted).to.equal(false);
  });
});

describe('VolumePublisher cancelled by shutdown', () => {
  let dir: string;
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'ssc-cancel-')); });
  after(async () => { await rm(dir, { recursive: true, force: true }); });

  it('fails with the shutdown error (named for the pod and class) and rolls back a first publish', async () => {
    const spc = { namespace: 'n', name: 's', provider: 'fake', parameters: {}, secretObjects: [], annotations: {} };
    const calls = new InFlightCalls('driver');
    const publisher = new VolumePublisher({
      locks: new TargetLocks(), mounter: new DirMounter(), logger, now: () => new Date(), classes: { get: async () => spc },
      // The provider call notices the abort as a cancellation, as the real client does.
      providers: { mount: async () => { void calls.cancelAll(0); throw new SscError('aborted', 'provider "fake" Mount was cancelled', { reason: 'Cancelled' }); } },
    });
    const targetPath = join(dir, 'first');
    const req = { volumeId: 'v', targetPath, spcName: 's', pod: { name: 'p', namespace: 'n', uid: 'u', serviceAccountName: '' }, volumeContext: {}, secrets: {} };
    const err = await publisher.publish(req, { signal: calls.signal }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('unavailable');
    expect((err as SscError).reason).to.equal('ShuttingDown');
    expect((err as SscError).message).to.equal('failed to publish volume v for pod n/p, SecretProviderClass n/s: the driver is shutting down and cancelled this call; it can be retried');
    expect(await stat(targetPath).then(() => 'exists', () => 'gone')).to.equal('gone');
  });
});
