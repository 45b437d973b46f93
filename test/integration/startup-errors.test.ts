import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli } from '../../bin/child-process.js';
import { CsiClient } from '../../bin/csi-client.js';
import { isGrpcCallError } from '../../lib/errors.js';
import { startDriverStack } from '../support/driver-stack.js';

/** Starts the driver with `args` and returns the stderr of its failed start (fails the test if it starts). */
async function failedStart(work: string, args: readonly string[]): Promise<string> {
  const outcome = await startCli(
    ['driver', `--endpoint=unix://${join(work, 'csi.sock')}`, '--nodeid=test-node', '--metrics-addr=', ...args],
    /driver started/,
    { timeoutMs: 20_000 },
  ).then(
    async (child) => {
      await child.stop();
      return undefined;
    },
    (err: Error) => err.message,
  );
  if (outcome === undefined) throw new Error(`the driver started with ${args.join(' ')}`);
  return outcome;
}

describe('startup errors name the flag and the file (real driver process)', () => {
  let work: string;
  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-startup-'));
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('refuses an --spc-dir that does not exist', async () => {
    const dir = join(work, 'no-such-classes');
    const stderr = await failedStart(work, [`--spc-dir=${dir}`, '--mount-mode=dir']);
    expect(stderr).to.contain(`exited with 1 before it was ready`);
    expect(stderr).to.contain(`secrets-store-csi: --spc-dir ${dir} does not exist`);
  });

  it('refuses a --kubeconfig that does not exist, saying "kubeconfig"', async () => {
    const file = join(work, 'no-such-kubeconfig');
    const stderr = await failedStart(work, [`--kubeconfig=${file}`]);
    expect(stderr).to.contain(`secrets-store-csi: --kubeconfig ${file} does not exist`);
  });

  it('refuses to take over the endpoint of a driver that is serving, which keeps serving', async () => {
    const endpoint = join(work, 'live.sock');
    const first = await startCli(
      [
        'driver',
        `--endpoint=unix://${endpoint}`,
        '--nodeid=test-node',
        '--metrics-addr=',
        `--spc-dir=${work}`,
        '--mount-mode=dir',
      ],
      /driver started/,
      { timeoutMs: 20_000 },
    );
    try {
      const refused = await startCli(
        [
          'driver',
          `--endpoint=unix://${endpoint}`,
          '--nodeid=test-node',
          '--metrics-addr=',
          `--spc-dir=${work}`,
          '--mount-mode=dir',
        ],
        /driver started/,
        { timeoutMs: 20_000 },
      ).then(
        async (child) => {
          await child.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
      expect(refused).to.contain('exited with 1 before it was ready');
      expect(refused).to.contain(`another process is serving on ${endpoint}; refusing to take over its endpoint`);
      const client = new CsiClient(endpoint);
      try {
        expect(await client.probe()).to.equal(true);
      } finally {
        client.close();
      }
    } finally {
      await first.stop();
    }
  });

  it('a --metrics-addr in use: the error names the flag, and no socket is left behind', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const endpoint = join(work, 'metrics-taken.sock');
      const stderr = await startCli(
        [
          'driver',
          `--endpoint=unix://${endpoint}`,
          '--nodeid=test-node',
          `--metrics-addr=127.0.0.1:${port}`,
          `--spc-dir=${work}`,
          '--mount-mode=dir',
        ],
        /driver started/,
        { timeoutMs: 20_000 },
      ).then(
        async (child) => {
          await child.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
      expect(stderr).to.contain(
        `secrets-store-csi: --metrics-addr 127.0.0.1:${port}: cannot listen: the address is in use`,
      );
      expect(existsSync(endpoint), 'socket file').to.equal(false);
    } finally {
      taken.close();
    }
  });
});

describe('a class file that does not parse (real driver process)', () => {
  it('makes the publish error name the file and the YAML error', async () => {
    const broken =
      'apiVersion: secrets-store.csi.x-k8s.io/v1\nkind: SecretProviderClass\nmetadata:\n  name: app\n  namespace: default\nspec: [unclosed\n';
    const stack = await startDriverStack({ classes: { 'app.yaml': broken } });
    try {
      const err = await stack.client.publish(stack.request(stack.targetPath('p'), 'app')).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!isGrpcCallError(err)) throw new Error(`expected a gRPC error, got ${String(err)}`);
      expect(grpc.status[err.code]).to.equal('NOT_FOUND');
      expect(err.details).to.match(
        /SecretProviderClass default\/app not found in .*; app\.yaml does not parse: .+ at line \d+, column \d+$/,
      );
    } finally {
      await stack.stop();
    }
  });
});
