import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { SscError } from '../../../../lib/errors.js';
import { createLogger } from '../../../../lib/logging/logger.js';
import { unary, type AsyncUnaryHandler, type CallContext } from '../../../../lib/grpc/unary.js';

/** A stand-in for grpc-js's ServerUnaryCall: the parts the adapter reads, and 'cancelled' to emit. */
function serverCall(
  deadline: Date | number = Infinity,
): EventEmitter & { request: unknown; cancelled: boolean; getDeadline(): Date | number } {
  return Object.assign(new EventEmitter(), { request: { q: 1 }, cancelled: false, getDeadline: () => deadline });
}

interface Answered {
  readonly errors: { code?: number; details?: string }[];
  readonly responses: unknown[];
}

/** Runs `handler` through the adapter on `call`; resolves after the first answer, with every answer seen by then. */
async function run(
  handler: AsyncUnaryHandler<unknown, unknown>,
  call = serverCall(),
  observe?: Parameters<typeof unary>[3],
): Promise<Answered & { logged: unknown[] }> {
  const logged: unknown[] = [];
  const logger = createLogger({ component: 'test', silent: true });
  logger.error = (message, fields) => {
    logged.push([message, fields]);
  };
  const answered: Answered = { errors: [], responses: [] };
  await new Promise<void>((resolve) => {
    unary(
      'M',
      handler,
      logger,
      observe,
    )(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, (err, res) => {
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
    const r = await run(
      async (req) => ({ echo: req }),
      serverCall(),
      (m, e) => seen.push([m, e]),
    );
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
      const r = await run(async () => {
        throw err;
      });
      expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([[code, err.message]]);
    });
  }

  it('answers an unexpected error INTERNAL with a generic text, and logs where it was thrown without a message that may hold data', async () => {
    const r = await run(async () => {
      JSON.parse('{"token": "hunter2"');
      return {};
    });
    expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([
      [grpc.status.INTERNAL, 'internal error (a bug): see the driver log'],
    ]);
    expect(r.logged).to.have.length(1);
    const line = JSON.stringify(r.logged[0]);
    expect(line).to.include('SyntaxError').and.include(' at ');
    expect(line).not.to.include('hunter2');
  });

  it('logs the message of a programming error (TypeError)', async () => {
    const r = await run(async () => {
      (undefined as unknown as { x: () => void }).x();
      return {};
    });
    expect(JSON.stringify(r.logged[0])).to.include('TypeError: Cannot read properties of undefined');
  });

  it('answers once even when the observer throws', async () => {
    const r = await run(
      async () => ({ ok: true }),
      serverCall(),
      () => {
        throw new Error('a broken metric');
      },
    );
    expect(r.responses).to.deep.equal([{ ok: true }]);
    const f = await run(
      async () => {
        throw new SscError('not-found', 'gone');
      },
      serverCall(),
      () => {
        throw new Error('a broken metric');
      },
    );
    expect(f.errors.map((e) => e.code)).to.deep.equal([grpc.status.NOT_FOUND]);
  });

  it('answers a handler that throws before its first await, once', async () => {
    const r = await run((() => {
      throw new SscError('not-found', 'gone');
    }) as unknown as AsyncUnaryHandler<unknown, unknown>);
    expect(r.errors.map((e) => e.code)).to.deep.equal([grpc.status.NOT_FOUND]);
  });

  it('gives the handler the deadline, and aborts its signal when the client cancels: rethrown, the reason is ABORTED (Cancelled)', async () => {
    const call = serverCall(new Date(Date.now() + 3_600_000));
    let ctx: CallContext | undefined;
    const seen: (string | undefined)[] = [];
    const answered = run(
      async (_req, c) => {
        ctx = c;
        await new Promise((resolve) => c.signal.addEventListener('abort', resolve, { once: true }));
        throw c.signal.reason;
      },
      call,
      (_m, e) => seen.push(e?.reason),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(ctx?.deadline?.getTime()).to.be.greaterThan(Date.now());
    expect(ctx?.signal.aborted).to.equal(false);
    call.emit('cancelled');
    expect((await answered).errors.map((e) => [e.code, e.details])).to.deep.equal([
      [grpc.status.ABORTED, 'the caller cancelled the call'],
    ]);
    expect(ctx?.signal.aborted).to.equal(true);
    expect(seen).to.deep.equal(['Cancelled']);
  });

  it("aborts the handler's signal when the deadline passes: rethrown, the reason is DEADLINE_EXCEEDED", async () => {
    const r = await run(
      async (_req, c) => {
        await new Promise((resolve) => c.signal.addEventListener('abort', resolve, { once: true }));
        throw c.signal.reason;
      },
      serverCall(Date.now() + 5),
    );
    expect(r.errors.map((e) => [e.code, e.details])).to.deep.equal([
      [grpc.status.DEADLINE_EXCEEDED, "the caller's deadline passed"],
    ]);
  });

  it("leaves the signal alone when grpc-js emits 'cancelled' after the answer (it does for every finished call)", async () => {
    const call = serverCall();
    let signal: AbortSignal | undefined;
    const r = await run(async (_req, c) => {
      signal = c.signal;
      return {};
    }, call);
    expect(r.responses).to.have.length(1);
    call.emit('cancelled');
    expect(signal?.aborted).to.equal(false);
    expect(call.listenerCount('cancelled')).to.equal(0);
  });

  it('gives no deadline when the client set none', async () => {
    let deadline: Date | undefined = new Date();
    await run(async (_req, c) => {
      deadline = c.deadline;
      return {};
    });
    expect(deadline).to.equal(undefined);
  });
});
