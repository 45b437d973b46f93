import { expect } from 'chai';
import { lstatSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { splitHook, type PublishHook } from '../../../../driver/publish/hook-stages.js';
import type { PublishFailureHook, VolumePublisher } from '../../../../driver/publish/publisher.js';
import { dirPublisher, publishRequest, TEST_SPC as spc } from '../../../support/dir-publisher.js';

/** A promise with its resolve function: an early part that finishes when the test says so. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Whether the volume's files are in (`..data` exists), looked at synchronously: at the moment a hook part runs. */
const written = (target: string): boolean => lstatSync(join(target, '..data'), { throwIfNoEntry: false }) !== undefined;

/** Split hooks (the pod status part of Kubernetes mode's hook): when each part runs against the write. */
describe('publish hooks in two parts (splitHook)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-hook-stages-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A publisher over a plain directory whose provider answers one file `a`. */
  function publisher(hooks: PublishHook[], failureHooks: PublishFailureHook[] = []): VolumePublisher {
    return dirPublisher({ hooks, failureHooks });
  }
  const req = (name: string) => publishRequest(join(dir, name));

  it('a first mount starts the first part before the files are written and returns only after it finished', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const r = req('first');
    const hook = splitHook<string>({
      async beforeWrite(volume) {
        seen.push(`before: written=${written(r.targetPath)} changed=${volume.changed} first=${volume.firstMount}`);
        await gate.promise;
        return 'status';
      },
      async afterWrite(_volume, _limits, before) {
        seen.push(`after: written=${written(r.targetPath)} got=${before}`);
      },
    });
    const published = publisher([hook]).publish(r);
    let done = false;
    void published.then(() => {
      done = true;
    });
    // The files go in while the first part waits (on the API server, in Kubernetes mode). The
    // writes run on libuv's thread pool: bounded by time, not by event-loop turns, which a
    // loaded machine runs through before the pool gets to them.
    for (const deadline = Date.now() + 10_000; !written(r.targetPath);) {
      if (Date.now() > deadline) throw new Error('the files were never written while the first part waited');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(done).to.equal(false);
    gate.resolve();
    await published;
    expect(seen).to.deep.equal(['before: written=false changed=true first=true', 'after: written=true got=status']);
  });

  it('a republish runs both parts after the write (what the first part does depends on whether it changed anything)', async () => {
    const seen: boolean[] = [];
    const r = req('republish');
    const hook = splitHook<void>({
      async beforeWrite() {
        seen.push(written(r.targetPath));
      },
      async afterWrite() {
        seen.push(written(r.targetPath));
      },
    });
    const p = publisher([hook]);
    await p.publish(r);
    await p.publish(r);
    expect(seen).to.deep.equal([false, true, true, true]);
  });

  it('a first mount whose write fails reports the failure only after the first part finished', async () => {
    const events: string[] = [];
    const gate = deferred();
    const reported = deferred();
    const r = req('write-fails');
    // A plain file where the volume's link `a` must go: the writer refuses to replace it.
    await mkdir(r.targetPath);
    await writeFile(join(r.targetPath, 'a'), 'not ours');
    const hook = splitHook<void>({
      async beforeWrite() {
        events.push('creating status');
        await gate.promise;
        events.push('status created');
      },
      async afterWrite() {
        events.push('after');
      },
    });
    // Kubernetes mode's failure hook deletes a failed first mount's status: never before it exists.
    const failureHook: PublishFailureHook = async () => {
      events.push('failure reported');
      reported.resolve();
    };
    const published = publisher([hook], [failureHook])
      .publish(r)
      .then(
        () => 'ok',
        (err: Error) => err.message,
      );
    // Nothing may be reported while the status is still being created: give it ample time to (wrongly) happen.
    await Promise.race([reported.promise, new Promise((resolve) => setTimeout(resolve, 200))]);
    events.push('gate opened');
    gate.resolve();
    expect(await published).to.match(/exists and is not a link/);
    expect(events).to.deep.equal(['creating status', 'gate opened', 'status created', 'failure reported']);
  });

  it('called as a function, a split hook runs its parts in turn', async () => {
    const seen: string[] = [];
    const hook = splitHook<number>({
      async beforeWrite() {
        seen.push('before');
        return 7;
      },
      async afterWrite(_v, _l, n) {
        seen.push(`after ${n}`);
      },
    });
    await hook(
      { request: req('whole'), spc, versions: [], changed: true, firstMount: true, origin: 'kubelet', skipped: false },
      {},
    );
    expect(seen).to.deep.equal(['before', 'after 7']);
  });
});
