import { expect } from 'chai';
import { SscError } from '../../proto/runtime/errors.js';
import { Semaphore } from '../../providers/exec/semaphore.js';

describe('exec provider: the helper semaphore (--max-concurrent-helpers)', () => {
  it('grants up to its limit at once, then one per release, in order', async () => {
    const s = new Semaphore(2);
    const signal = new AbortController().signal;
    const a = await s.acquire(signal);
    const b = await s.acquire(signal);
    const order: string[] = [];
    const c = s.acquire(signal).then((release) => { order.push('c'); return release; });
    const d = s.acquire(signal).then((release) => { order.push('d'); return release; });
    await Promise.resolve();
    expect([s.running, order]).to.deep.equal([2, []]);
    a();
    a(); // a second call of one release frees nothing more
    const releaseC = await c;
    expect(order).to.deep.equal(['c']);
    b();
    const releaseD = await d;
    expect(order).to.deep.equal(['c', 'd']);
    releaseC();
    releaseD();
    expect(s.running).to.equal(0);
  });

  it('a wait whose Mount ends is DEADLINE_EXCEEDED HelperTimeout and takes no slot', async () => {
    const s = new Semaphore(1);
    const release = await s.acquire(new AbortController().signal);
    const ctl = new AbortController();
    const waiting = s.acquire(ctl.signal);
    ctl.abort();
    const err = await waiting.then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['deadline-exceeded', 'HelperTimeout']);
    release();
    expect(s.running).to.equal(0);
    const again = await s.acquire(new AbortController().signal);
    expect(s.running).to.equal(1);
    again();
  });

  it('an already ended Mount gets no slot', async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect(await new Semaphore(1).acquire(ctl.signal).then(() => 'granted', () => 'refused')).to.equal('refused');
  });
});
