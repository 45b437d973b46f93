import { expect } from 'chai';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startCli, type Child } from '../../bin/child-process.js';
import { realSleep } from '../../lib/sleep.js';
import { fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { outcome } from '../support/call-outcome.js';

// the driver caches one channel per provider. A provider that crashed and
// came back must be usable by the very next publish, whatever grpc-js's reconnect backoff
// had grown to while it was down.

/** Kubelet's retry of a failed mount: 0.5 s, doubling (its exponential backoff). */
const KUBELET_FIRST_RETRY_MS = 500;

describe('provider outage (real file provider killed and restarted)', function () {
  let stack: DriverStack;
  let provider: Child | undefined;

  function startProvider(): Promise<Child> {
    return startCli(
      [
        'provider',
        'file',
        `--endpoint=unix://${join(stack.providersDir, 'file.sock')}`,
        `--root=${stack.providerRoot}`,
        `--hmac-key-file=${join(stack.work, 'hmac.key')}`,
      ],
      /provider started/,
    );
  }

  /** SIGKILL, as a crash or an OOM kill: the socket file stays behind, nothing listens on it. */
  async function crashProvider(): Promise<void> {
    const child = provider;
    provider = undefined;
    if (!child) return;
    const exited = new Promise((resolve) => child.process.once('exit', resolve));
    child.process.kill('SIGKILL');
    await exited;
  }

  before(async () => {
    stack = await startDriverStack({
      classes: { 'app.yaml': fileClass('app', [{ objectName: 'pw', sourcePath: 'pw' }]) },
    });
    await mkdir(stack.providerRoot, { recursive: true });
    await writeFile(join(stack.providerRoot, 'pw'), 'hunter2');
    provider = await startProvider();
  });
  after(async () => {
    await provider?.stop();
    await stack?.stop();
  });

  for (const outageS of [1, 5, 20]) {
    it(`the first publish after a ${outageS} s outage succeeds`, async function () {
      this.timeout(outageS * 1000 + 20_000);
      const before = stack.targetPath(`before-${outageS}`);
      const target = stack.targetPath(`after-${outageS}`);
      // A working channel first, as on a node that served pods before the crash.
      await stack.client.publish(stack.request(before, 'app', `before-${outageS}`));
      await crashProvider();
      // Meanwhile kubelet retries a new pod's mount with its backoff; each try fails fast,
      // well before kubelet's deadline, naming the provider and its socket.
      const ends = Date.now() + outageS * 1000;
      for (let wait = KUBELET_FIRST_RETRY_MS; Date.now() < ends; wait *= 2) {
        const started = Date.now();
        const down = await outcome(stack.client.publish(stack.request(target, 'app', `after-${outageS}`)));
        expect(down.code).to.equal('UNAVAILABLE');
        expect(down.message).to.include(
          `provider "file" Mount unavailable (socket ${join(stack.providersDir, 'file.sock')})`,
        );
        expect(Date.now() - started).to.be.below(5000);
        await realSleep(Math.max(0, Math.min(wait, ends - Date.now())));
      }
      provider = await startProvider();
      // The socket is back: the very next publish must work.
      expect(await outcome(stack.client.publish(stack.request(target, 'app', `after-${outageS}`)))).to.deep.equal({
        code: 'OK',
        message: '',
      });
      expect(await readFile(join(target, 'pw'), 'utf8')).to.equal('hunter2');
      await stack.client.unpublish(`vol-after-${outageS}`, target);
      await stack.client.unpublish(`vol-before-${outageS}`, before);
      expect(await mountsUnder(stack.work)).to.deep.equal([]);
    });
  }
});
