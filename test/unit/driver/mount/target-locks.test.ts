import { expect } from 'chai';
import { TargetLocks } from '../../../../driver/mount/target-locks.js';
import { SscError } from '../../../../lib/errors.js';

/** A promise plus its resolve function, so a locked operation can be held open without timers. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('TargetLocks', () => {
  const same: [string, string][] = [
    ['/t/a', '/t/a'],
    ['/t/a/', '/t/a'],
    ['/t/a', '/t/a//'],
    ['/t/a', '/t//a'],
    ['/t/a', '/t/./a'],
    ['/t//a/', '/./t/a/.'],
  ];
  for (const [first, second] of same) {
    it(`refuses ${second} while ${first} is held, with aborted`, async () => {
      const locks = new TargetLocks();
      const g = gate();
      const held = locks.withLock(first, () => g.promise.then(() => 'first'));
      const err = await rejection(locks.withLock(second, async () => 'second'));
      expect(err).to.be.instanceOf(SscError);
      expect((err as SscError).kind).to.equal('aborted');
      expect((err as SscError).reason).to.equal('OperationInProgress');
      expect((err as SscError).message).to.equal(`an operation for target path ${second} is already in progress`);
      g.open();
      expect(await held).to.equal('first');
      expect(locks.size).to.equal(0);
    });
  }

  it('lets different paths run at once', async () => {
    const locks = new TargetLocks();
    const g = gate();
    const a = locks.withLock('/t/a', () => g.promise.then(() => 'a'));
    const b = locks.withLock('/t/b', () => g.promise.then(() => 'b'));
    const c = locks.withLock('/t/a/b', async () => 'c');
    expect(locks.size).to.equal(3);
    expect(await c).to.equal('c');
    g.open();
    expect(await Promise.all([a, b])).to.deep.equal(['a', 'b']);
    expect(locks.size).to.equal(0);
  });

  it('releases the lock when the operation rejects, and passes the error through', async () => {
    const locks = new TargetLocks();
    const boom = new SscError('unavailable', 'provider down');
    expect(
      await rejection(
        locks.withLock('/t/a', async () => {
          throw boom;
        }),
      ),
    ).to.equal(boom);
    expect(locks.size).to.equal(0);
    expect(await locks.withLock('/t/a', async () => 42)).to.equal(42);
  });

  it('releases the lock when the operation throws synchronously', async () => {
    const locks = new TargetLocks();
    const err = await rejection(
      locks.withLock('/t/a', () => {
        throw new Error('sync');
      }),
    );
    expect((err as Error).message).to.equal('sync');
    expect(await locks.withLock('/t/a', async () => 'again')).to.equal('again');
  });

  it("a refused caller does not release the holder's lock", async () => {
    const locks = new TargetLocks();
    const g = gate();
    const held = locks.withLock('/t/a', () => g.promise);
    await rejection(locks.withLock('/t/a', async () => undefined));
    expect(((await rejection(locks.withLock('/t/a/', async () => undefined))) as SscError).kind).to.equal('aborted');
    g.open();
    await held;
  });
});
