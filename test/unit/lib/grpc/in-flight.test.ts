import { expect } from 'chai';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { SscError } from '../../../../lib/errors.js';
import { InFlightCalls } from '../../../../lib/grpc/in-flight.js';
import { createLogger } from '../../../../lib/logging/logger.js';
import { unary } from '../../../../lib/grpc/unary.js';
import { dirPublisher, publishRequest } from '../../../support/dir-publisher.js';

const logger = createLogger({ component: 'test', silent: true });

/** How the adapter answered a call: the error status or the response. */
interface Answer {
  readonly err: { code?: number; details?: string } | null;
  readonly res: unknown;
}

/**
 * Runs a grpc-js unary handler on a stand-in for grpc-js's ServerUnaryCall (no deadline,
 * never cancelled: the parts the adapter reads) and resolves with its one answer.
 */
function serve(handler: grpc.handleUnaryCall<unknown, unknown>): Promise<Answer> {
  const call = Object.assign(new EventEmitter(), { request: {}, cancelled: false, getDeadline: () => Infinity });
  return new Promise((resolve) => {
    handler(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, res) =>
      resolve({ err: err ?? null, res }),
    );
  });
}

describe('InFlightCalls', () => {
  it('cancels running calls with UNAVAILABLE ShuttingDown and waits for their cleanup', async () => {
    const calls = new InFlightCalls('driver');
    const cleanedUp: string[] = [];
    const handler = unary(
      'Slow',
      async (_req: unknown, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        await Promise.resolve();
        cleanedUp.push('rolled back');
        throw ctx.signal.reason;
      },
      logger,
      undefined,
      calls,
    );
    const answered = serve(handler);
    expect(calls.size).to.equal(1);
    expect(await calls.cancelAll(60_000)).to.equal(true);
    // cancelAll returned only after the handler's cleanup ran.
    expect(cleanedUp).to.deep.equal(['rolled back']);
    const { err } = await answered;
    expect(err?.code).to.equal(grpc.status.UNAVAILABLE);
    expect(err?.details).to.equal('the driver is shutting down and cancelled this call; it can be retried');
    expect(calls.size).to.equal(0);
  });

  it('refuses calls that arrive after shutdown began, without running the handler', async () => {
    const calls = new InFlightCalls('driver');
    await calls.cancelAll(0);
    let ran = false;
    const handler = unary(
      'Any',
      async () => {
        ran = true;
        return {};
      },
      logger,
      undefined,
      calls,
    );
    expect((await serve(handler)).err?.code).to.equal(grpc.status.UNAVAILABLE);
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
    const handler = unary(
      'Quick',
      async (_req: unknown, ctx) => {
        seen = ctx.signal;
        return {};
      },
      logger,
      undefined,
      calls,
    );
    expect((await serve(handler)).err).to.equal(null);
    await new Promise((resolve) => setImmediate(resolve));
    await calls.cancelAll(0);
    expect(seen?.aborted).to.equal(false);
  });
});

describe('VolumePublisher cancelled by shutdown', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-cancel-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails with the shutdown error (named for the pod and class) and rolls back a first publish', async () => {
    const calls = new InFlightCalls('driver');
    const publisher = dirPublisher({
      // The provider call notices the abort as a cancellation, as the real client does.
      providers: {
        mount: async () => {
          void calls.cancelAll(0);
          throw new SscError('aborted', 'provider "fake" Mount was cancelled', { reason: 'Cancelled' });
        },
      },
    });
    const targetPath = join(dir, 'first');
    const err = await publisher.publish(publishRequest(targetPath), { signal: calls.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    expect((err as SscError).kind).to.equal('unavailable');
    expect((err as SscError).reason).to.equal('ShuttingDown');
    expect((err as SscError).message).to.equal(
      'failed to publish volume v for pod n/p, SecretProviderClass n/s: the driver is shutting down and cancelled this call; it can be retried',
    );
    expect(
      await stat(targetPath).then(
        () => 'exists',
        () => 'gone',
      ),
    ).to.equal('gone');
  });
});
