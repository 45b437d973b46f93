import { expect } from 'chai';
import { lstat, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderClient } from '../../driver/provider-client/client.js';
import { realSleep } from '../../lib/sleep.js';
import { SscError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logging/logger.js';
import { CAN_MOUNT, fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';
import { outcome } from '../support/call-outcome.js';

/** Before the fix the driver waited out a 5 s grace period; a prompt exit takes well under this. */
const PROMPT_EXIT_MS = 4000;

describe('SIGTERM while a publish waits on a hanging provider (real driver process)', function () {
  let stack: DriverStack | undefined;
  let provider: ScriptedProvider | undefined;
  /** Lets the hanging provider calls go (after the test), so nothing waits on them. */
  let release = () => {};
  /** Resolves once the provider has received a Mount it will hold. */
  let reached: Promise<void>;

  /** From now on, Mount calls hang until `release`. */
  function hang(): void {
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived = () => {};
    reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    if (provider)
      provider.script = async () => {
        arrived();
        await held;
        return responseWith([{ path: 'x', contents: 'new' }]);
      };
  }

  /** SIGTERMs the driver; resolves with how long it took to exit, and its exit code. */
  async function terminate(s: DriverStack): Promise<{ ms: number; code: number | null }> {
    const started = performance.now();
    const code = await s.driver.stop(10_000);
    return { ms: performance.now() - started, code };
  }

  beforeEach(async function () {
    if (!CAN_MOUNT) this.skip();
    stack = await startDriverStack({ classes: { 'held.yaml': fileClass('held', [{ objectName: 'x' }], 'held') } });
    provider = await startScriptedProvider(stack.providersDir, 'held', async () =>
      responseWith([{ path: 'x', contents: 'old' }]),
    );
  });
  afterEach(async () => {
    release();
    await provider?.stop();
    await stack?.stop();
  });

  it('cancels a first publish, unmounts its tmpfs and exits promptly; the publish gets UNAVAILABLE', async () => {
    const s = stack as DriverStack;
    const target = s.targetPath('first');
    hang();
    const publish = outcome(s.client.publish(s.request(target, 'held', 'first')));
    await reached;
    expect(await mountsUnder(target)).to.deep.equal([target]);
    const exit = await terminate(s);
    const o = await publish;
    expect({
      exitCode: exit.code,
      prompt: exit.ms < PROMPT_EXIT_MS,
      code: o.code,
      mounts: await mountsUnder(target),
      target: await lstat(target).then(
        () => 'exists',
        () => 'gone',
      ),
    }).to.deep.equal({ exitCode: 0, prompt: true, code: 'UNAVAILABLE', mounts: [], target: 'gone' });
    expect(o.message)
      .to.include('pod default/first')
      .and.include('the driver is shutting down and cancelled this call');
  });

  it('cancels a republish and keeps the mounted volume with its old content', async () => {
    const s = stack as DriverStack;
    const target = s.targetPath('again');
    await s.client.publish(s.request(target, 'held', 'again'));
    hang();
    const publish = outcome(s.client.publish(s.request(target, 'held', 'again')));
    await reached;
    const exit = await terminate(s);
    const o = await publish;
    expect({
      exitCode: exit.code,
      prompt: exit.ms < PROMPT_EXIT_MS,
      code: o.code,
      mounts: await mountsUnder(target),
      content: await readFile(join(target, 'x'), 'utf8'),
    }).to.deep.equal({ exitCode: 0, prompt: true, code: 'UNAVAILABLE', mounts: [target], content: 'old' });
  });
});

describe('ProviderClient with a signal that aborted before the call started', () => {
  let dir: string;
  let provider: ScriptedProvider;
  let release = () => {};
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-abort-'));
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    provider = await startScriptedProvider(dir, 'held', async () => {
      await held;
      return responseWith([{ path: 'x' }]);
    });
  });
  after(async () => {
    release();
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('cancels at once instead of waiting for the deadline (shutdown may abort between two awaits)', async () => {
    const client = new ProviderClient({
      providerDirs: [dir],
      maxCallRecvMsgSize: 4 << 20,
      timeoutMs: 5000,
      sleep: realSleep,
      logger: createLogger({ component: 'test', silent: true }),
    });
    try {
      const request = {
        attributes: '{}',
        secrets: '{}',
        target_path: '/t',
        permission: '420',
        current_object_version: [],
      };
      const started = performance.now();
      const err = await client.mount('held', request, { signal: AbortSignal.abort(new Error('gone')) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // Without the check, the call ran until its 5 s deadline (the provider never answers).
      expect(performance.now() - started).to.be.below(2500);
      expect(err).to.be.instanceOf(SscError);
      expect((err as SscError).reason).to.equal('Cancelled');
    } finally {
      client.close();
    }
  });
});
