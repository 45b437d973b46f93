import { expect } from 'chai';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseMountInfo } from '../../driver/mount/mountinfo.js';
import { CAN_MOUNT, fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { outcome } from '../support/call-outcome.js';

/** How many mounts sit exactly at `path` (stacked mounts count one each). */
async function mountCount(path: string): Promise<number> {
  return parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8')).filter((e) => e.mountPoint === path).length;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** A gate a scripted Mount waits on, opened by the test. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('target paths: spellings and nesting (real driver, tmpfs)', function () {
  let stack: DriverStack;
  let held: ScriptedProvider;

  before(async function () {
    if (!CAN_MOUNT) this.skip();
    stack = await startDriverStack({
      classes: {
        'app.yaml': fileClass('app', [{ objectName: 'password' }]),
        'held.yaml': fileClass('held', [{ objectName: 'x' }], 'held'),
      },
      providerFiles: { password: 'hunter2' },
    });
    held = await startScriptedProvider(stack.providersDir, 'held', async () =>
      responseWith([{ path: 'x', contents: 'held' }]),
    );
  });
  after(async () => {
    await held?.stop();
    await stack?.stop();
  });

  it('four parallel publishes of one directory in four spellings make one mount; unpublish by a fifth spelling removes it', async () => {
    const target = stack.targetPath('spell');
    const spellings = [target, `${target}/`, target.replace('/pods/', '//pods/'), target.replace('/pods/', '/./pods/')];
    // Every call is held at the provider until all four have either reached it or been
    // answered, so they truly overlap whatever order they arrive in.
    const release = gate();
    let accounted = 0;
    const allIn = gate();
    const account = () => {
      if (++accounted >= spellings.length) allIn.open();
    };
    held.script = async () => {
      account();
      await release.opened;
      return responseWith([{ path: 'x', contents: 'held' }]);
    };
    const calls = spellings.map((s) =>
      outcome(stack.client.publish(stack.request(s, 'held', 'spell'))).then((o) => {
        if (o.code !== 'OK') account();
        return o;
      }),
    );
    await allIn.opened;
    release.open();
    const results = await Promise.all(calls);
    expect(results.map((r) => r.code).sort()).to.deep.equal(['ABORTED', 'ABORTED', 'ABORTED', 'OK']);
    expect(await mountCount(target)).to.equal(1);
    expect(await readFile(join(target, 'x'), 'utf8')).to.equal('held');
    // The one publish that ran sent kubelet's spelling to the provider, whichever it got.
    expect(held.requests.at(-1)?.target_path).to.equal(target);

    await stack.client.unpublish(`vol-spell`, `${target.replace('/volumes/', '/./volumes//')}/`);
    expect(await mountCount(target)).to.equal(0);
    expect(await exists(target)).to.equal(false);
  });

  describe('a target inside another volume, or around one', () => {
    it('refuses a target inside a published volume, and one inside its ..data, naming both paths', async () => {
      const outer = stack.targetPath('outer');
      await stack.client.publish(stack.request(outer, 'app', 'outer'));
      for (const inner of [join(outer, 'inner'), join(outer, '..data', 'x')]) {
        const o = await outcome(stack.client.publish(stack.request(inner, 'app', 'inner')));
        expect(o.code, inner).to.equal('FAILED_PRECONDITION');
        expect(o.message).to.include(`target path ${inner} is inside the volume at ${outer}`);
        expect(o.message).to.include('pod default/inner');
        expect(await exists(inner), inner).to.equal(false);
      }
      expect(await mountsUnder(outer)).to.deep.equal([outer]);
      // The outer volume is untouched and still unpublishes cleanly.
      expect(await readFile(join(outer, 'password'), 'utf8')).to.equal('hunter2');
      await stack.client.unpublish('vol-outer', outer);
      expect(await mountsUnder(outer)).to.deep.equal([]);
      expect(await exists(outer)).to.equal(false);
    });

    it('refuses a target that would contain a published volume, naming both paths', async () => {
      const around = join(stack.work, 'around');
      const inner = join(around, 'pod', 'mount');
      await stack.client.publish(stack.request(inner, 'app', 'inner'));
      const o = await outcome(stack.client.publish(stack.request(around, 'app', 'around')));
      expect(o.code).to.equal('FAILED_PRECONDITION');
      expect(o.message).to.include(`target path ${around} contains the volume at ${inner}`);
      expect(await mountsUnder(around)).to.deep.equal([inner]);
      expect(await readFile(join(inner, 'password'), 'utf8')).to.equal('hunter2');
      await stack.client.unpublish('vol-inner', inner);
      expect(await mountsUnder(around)).to.deep.equal([]);
    });

    it('refuses a target inside a volume whose first publish is still running', async () => {
      const outer = stack.targetPath('slow');
      const release = gate();
      const reached = gate();
      held.script = async () => {
        reached.open();
        await release.opened;
        return responseWith([{ path: 'x', contents: 'held' }]);
      };
      const first = outcome(stack.client.publish(stack.request(outer, 'held', 'slow')));
      await reached.opened;
      const o = await outcome(stack.client.publish(stack.request(join(outer, 'inner'), 'app', 'inner')));
      release.open();
      expect(o.code).to.equal('FAILED_PRECONDITION');
      expect(o.message).to.include(`target path ${join(outer, 'inner')} is inside the volume at ${outer}`);
      expect((await first).code).to.equal('OK');
      expect(await mountsUnder(outer)).to.deep.equal([outer]);
      await stack.client.unpublish('vol-slow', outer);
      expect(await mountsUnder(outer)).to.deep.equal([]);
    });
  });
});
