import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli, spawnCli, type CliRun } from '../support/cli-run.js';
import { fileClass, startDriverStack, type DriverStack } from '../support/driver-stack.js';

// the README's quick start starts the driver in the background and runs
// `publish` at once; the CLI must wait for the socket instead of failing with grpc-js's text.
describe('publish/unpublish CLI against a driver that is not (yet) listening', function () {
  let work: string;
  let stack: DriverStack | undefined;
  let publish: CliRun | undefined;

  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-cli-'));
  });
  afterEach(async () => {
    publish?.process.kill('SIGKILL');
    await publish?.exited;
    publish = undefined;
    if (stack) await stack.stop();
    else await rm(work, { recursive: true, force: true });
    stack = undefined;
  });

  it('publish started before the driver waits for its socket, says so, then publishes', async () => {
    const target = join(work, 'vol');
    publish = spawnCli([
      'publish',
      `--endpoint=unix://${join(work, 'csi.sock')}`,
      `--target-path=${target}`,
      '--secret-provider-class=app',
    ]);
    await publish.until('stderr', /waiting up to/);
    stack = await startDriverStack({
      work,
      classes: { 'app.yaml': fileClass('app', [{ objectName: 'token', sourcePath: 'token' }]) },
      providerFiles: { token: 'tok-1' },
    });
    expect(await publish.exited, publish.stderr()).to.equal(0);
    expect(publish.stdout()).to.equal(`published ${target}\n`);
    expect(publish.stderr()).to.equal(
      `secrets-store-csi: waiting up to 30s for a driver at unix://${join(work, 'csi.sock')} (connect ENOENT)\n`,
    );
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('tok-1');
    const unpublish = await runCli([
      'unpublish',
      `--endpoint=unix://${join(work, 'csi.sock')}`,
      `--target-path=${target}`,
    ]);
    expect([unpublish.code, unpublish.stdout, unpublish.stderr]).to.deep.equal([0, `unpublished ${target}\n`, '']);
  });

  for (const command of ['publish', 'unpublish']) {
    it(`${command} with no driver gives up at --timeout with "no driver listening at <endpoint>"`, async () => {
      const socket = join(work, 'csi.sock');
      const r = await runCli(
        [
          command,
          `--endpoint=unix://${socket}`,
          `--target-path=${join(work, 'vol')}`,
          '--secret-provider-class=app',
          '--timeout=300ms',
        ].filter((a) => command === 'publish' || !a.startsWith('--secret-provider-class')),
      );
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.equal(
        `secrets-store-csi: waiting up to 300ms for a driver at unix://${socket} (connect ENOENT)\n` +
          `secrets-store-csi: no driver listening at unix://${socket} (connect ENOENT, waited 300ms)\n`,
      );
    });
  }

  it('a driver that goes away during the call is reported as "no driver listening", not as grpc-js text', async () => {
    const socket = join(work, 'csi.sock');
    // Connection 1 is the CLI's wait probe; connection 2 is the call: the "driver" stops listening then.
    let connections = 0;
    const server = createServer((conn) => {
      if (++connections === 2) {
        server.close();
        conn.destroy();
      }
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const r = await runCli([
        'unpublish',
        `--endpoint=unix://${socket}`,
        `--target-path=${join(work, 'vol')}`,
        '--timeout=5s',
      ]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(
        new RegExp(
          `^secrets-store-csi: NodeUnpublishVolume failed: no driver listening at unix://${socket} \\(connect (ENOENT|ECONNREFUSED)\\)\n$`,
        ),
      );
    } finally {
      server.close();
    }
  });

  for (const [value, message] of [
    ['abc', '--timeout: invalid duration "abc"'],
    ['30', '--timeout: missing unit in duration "30"'],
    ['0s', '--timeout must be greater than zero, got "0s"'],
  ]) {
    it(`publish --timeout=${value} is refused naming the flag`, async () => {
      const r = await runCli([
        'publish',
        `--endpoint=unix://${join(work, 'csi.sock')}`,
        `--target-path=${join(work, 'vol')}`,
        '--secret-provider-class=app',
        `--timeout=${value}`,
      ]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`secrets-store-csi: ${message}`);
    });
  }
});
