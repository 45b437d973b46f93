import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { SscError } from '../../proto/runtime/errors.js';
import { createLogger } from '../../proto/runtime/logger.js';
import { unary, type AsyncUnaryHandler, type CallContext } from '../../proto/runtime/unary.js';

/** A stand-in for grpc-js's ServerUnaryCall: the parts the adapter reads, and 'cancelled' to emit. */
function serverCall(deadline: Date | number = Infinity): EventEmitter & { request: unknown; cancelled: boolean; getDeadline(): Date | number } {
  return Object.assign(new EventEmitter(), { request: { q: 1 }, cancelled: false, getDeadline: () => deadline });
}

interface Answered {
  readonly errors: { code?: number; details?: string }[];
  readonly responses: unknown[];
}

/** Runs `handler` through the adapter on `call`; resolves after the first answer, with every answer seen by then. */
async function run(handler: AsyncUnaryHandler<unknown, unknown>, call = serverCall(), observe?: Parameters<typeof unary>[3]): Promise<Answered & { logged: unknown[] }> {
  const logged: unknown[] = [];
  const logger = createLogger({ component: 'test', silent: true });
  logger.error = (message, fields) => { logged.push([message, fields]); };
  const answered: Answered = { errors: [], responses: [] };
  await new Promise<void>((resolve) => {
    unary('M', handler, logger, observe)(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, res) => {
      if (err) answered.errors.push(err);
      else answered.responses.push(res);
      resolve();
    });
  });
  await new Promise((resolve) => setImmediate(resolve));
  return { ...answered, logged };
}

describe('unary: the one adapter between async handlers and grpc-js', () => {
  it('answers the response once and tells the observer', async () => {
    const seen: [string, SscError | undefined][] = [];
    const r = await run(async (req) => ({ echo: req }), serverCall(), (m, e) => seen.push([m, e]));
    expect(r.responses).to.deep.equal([{ echo: { q: 1 } }]);
    expect(r.errors).to.deep.equal([]);
    expect(seen).to.deep.equal([['M', undefined]]);
  });

  const kinds: [SscError, grpc.status][] = [
    [new SscError('invalid-argument', 'Volume ID missing in request'), grpc.status.INVALID_ARGUMENT],
    [new SscError('not-found', 'class default/x not found'), grpc.status.NOT_FOUND],
    [new SscError('unavailable', 'provider down'), grpc.status.UNAVAILABLE],
    [new SscError('resource-exhausted', 'too large'), grpc.status.RESOURCE_EXHAUSTED],
    [new SscError('aborted', 'busy'), grpc.status.ABORTED],
  ];
  for (const [err, code] of kinds) {
    it(`answers an SscError of kind ${err.kind} with ${grpc.status[code]} and its message`, async () => {
      const r = await run(async () => { throw err; });
      expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([[code, err.message]]);
    });
  }

  it('answers an unexpected error INTERNAL with a generic text, never its message, and logs it', async () => {
    const r = await run(async () => { throw new TypeError('cannot read hunter2'); });
    expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([[grpc.status.INTERNAL, 'internal error (a bug): see the driver log']]);
    expect(r.logged).to.have.length(1);
  });

  it('answers a handler that throws before its first await, once', async () => {
    const r = await run((() => { throw new SscError('not-found', 'gone'); }) as unknown as AsyncUnaryHandler<unknown, unknown>);
    expect(r.errors.map((e) => e.code)).to.deep.equal([grpc.status.NOT_FOUND]);
  });

  it('gives the handler the deadline, and aborts its signal when the client cancels', async () => {
    const call = serverCall(new Date(Date.now() + 3_600_000));
    let ctx: CallContext | undefined;
    const answered = run(async (_req, c) => {
      ctx = c;
      await new Promise((resolve) => c.signal.addEventListener('abort', resolve, { once: true }));
      throw new SscError('aborted', 'cancelled');
    }, call);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ctx?.deadline?.getTime()).to.be.greaterThan(Date.now());
    expect(ctx?.signal.aborted).to.equal(false);
    call.emit('cancelled');
    expect((await answered).errors.map((e) => e.code)).to.deep.equal([grpc.status.ABORTED]);
    expect(ctx?.signal.aborted).to.equal(true);
  });

  it('aborts the handler\'s signal when the deadline passes', async () => {
    const r = await run(async (_req, c) => {
      await new Promise((resolve) => c.signal.addEventListener('abort', resolve, { once: true }));
      throw new SscError('deadline-exceeded', String((c.signal.reason as Error).message));
    }, serverCall(Date.now() + 5));
    expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([[grpc.status.DEADLINE_EXCEEDED, 'deadline exceeded']]);
  });

  it('gives no deadline when the client set none', async () => {
    let deadline: Date | undefined = new Date();
    await run(async (_req, c) => { deadline = c.deadline; return {}; });
    expect(deadline).to.equal(undefined);
  });
});
