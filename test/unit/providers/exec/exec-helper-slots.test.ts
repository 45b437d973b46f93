import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { HelperSlots } from '../../../../providers/exec/helper-slots.js';

/** A call that runs until `finish` is called, recording when it started. */
function held(log: string[], name: string): { call: () => Promise<string>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return {
    call: async () => {
      log.push(name);
      await done;
      return name;
    },
    finish,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('exec provider: the helper slots (--max-concurrent-helpers)', () => {
  it('runs up to its limit at once, then one more per finished call, in the order they came', async () => {
    const s = new HelperSlots(2);
    const signal = new AbortController().signal;
    const started: string[] = [];
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => held(started, n)) as [
      ReturnType<typeof held>,
      ReturnType<typeof held>,
      ReturnType<typeof held>,
      ReturnType<typeof held>,
    ];
    const results = [a, b, c, d].map((x) => s.run(signal, x.call));
    await turn();
    expect([s.running, s.waiting, started]).to.deep.equal([2, 2, ['a', 'b']]);
    a.finish();
    await turn();
    expect([s.running, s.waiting, started]).to.deep.equal([2, 1, ['a', 'b', 'c']]);
    b.finish();
    c.finish();
    d.finish();
    expect(await Promise.all(results)).to.deep.equal(['a', 'b', 'c', 'd']);
    await turn();
    expect([s.running, s.waiting]).to.deep.equal([0, 0]);
  });

  it('a wait whose Mount ends is DEADLINE_EXCEEDED HelperTimeout at once, never runs and takes no slot', async () => {
    const s = new HelperSlots(1);
    const log: string[] = [];
    const first = held(log, 'first');
    const running = s.run(new AbortController().signal, first.call);
    const ctl = new AbortController();
    const waiting = s.run(ctl.signal, async () => {
      log.push('never');
      return 'never';
    });
    await turn();
    expect(s.waiting).to.equal(1);
    ctl.abort(new Error('the Mount ended'));
    // Rejected while the first call still runs, and out of the queue.
    const err = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['deadline-exceeded', 'HelperTimeout']);
    expect([s.running, s.waiting]).to.deep.equal([1, 0]);
    first.finish();
    expect(await running).to.equal('first');
    expect(await s.run(new AbortController().signal, async () => 'next')).to.equal('next');
    expect(log).to.deep.equal(['first']);
  });

  it('an already ended Mount gets no slot, even a free one', async () => {
    const ctl = new AbortController();
    ctl.abort();
    let ran = false;
    const outcome = await new HelperSlots(1)
      .run(ctl.signal, async () => {
        ran = true;
      })
      .then(
        () => 'granted',
        (e: unknown) => (e as SscError).reason,
      );
    expect([outcome, ran]).to.deep.equal(['HelperTimeout', false]);
  });

  it('a running call whose Mount ends keeps its slot until it has settled, and answers what it answers', async () => {
    // The helper runner sees the Mount's signal, kills the helper and answers "cancelled"
    // once it is gone: until then no other helper may start.
    const s = new HelperSlots(1);
    const log: string[] = [];
    const ctl = new AbortController();
    let killed!: () => void;
    const gone = new Promise<void>((resolve) => {
      killed = resolve;
    });
    const cancelledRun = s.run(ctl.signal, async () => {
      log.push('helper');
      await gone;
      log.push('helper gone');
      return 'cancelled';
    });
    const next = s.run(new AbortController().signal, async () => {
      log.push('next');
      return 'next';
    });
    await turn();
    ctl.abort(new Error('the Mount ended'));
    await turn();
    await turn();
    expect([s.running, s.waiting, log]).to.deep.equal([1, 1, ['helper']]);
    killed();
    expect(await cancelledRun).to.equal('cancelled');
    expect(await next).to.equal('next');
    expect(log).to.deep.equal(['helper', 'helper gone', 'next']);
  });

  it("a call's own failure comes back as it is", async () => {
    const failure = new SscError('not-found', 'exec provider: helper said no', { reason: 'HelperFailed' });
    const err = await new HelperSlots(1)
      .run(new AbortController().signal, () => Promise.reject(failure))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).to.equal(failure);
  });
});
