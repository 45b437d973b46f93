import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type Child } from '../../bin/child-process.js';
import { ProviderClient } from '../../driver/provider-client/client.js';
import { realSleep } from '../../lib/sleep.js';
import { SscError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logging/logger.js';
import { rejection } from '../support/deferred.js';
import { requirePeer } from '../support/peers.js';

// The driver's provider client (grpc-js) against a grpc-go server, the implementation of
// upstream's providers: upstream's fake provider in its own process.

describe("the provider client against upstream's fake provider (grpc-go server, real Go process)", function () {
  this.timeout(30_000);
  let dir: string;
  let provider: Child;
  const client = (maxCallRecvMsgSize = 4 * 1024 * 1024) =>
    new ProviderClient({
      providerDirs: [dir],
      maxCallRecvMsgSize,
      timeoutMs: 5000,
      sleep: realSleep,
      logger: createLogger({ component: 'test', silent: true }),
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-go-peer-'));
    const config = join(dir, 'fake.json');
    const files = [{ path: 'big', mode: 0o644, contents: Buffer.alloc(64 * 1024, 'a').toString('base64') }];
    await writeFile(config, JSON.stringify({ objects: { 'secret/big': 'v1' }, files }));
    provider = await startProcess(
      requirePeer('UPSTREAM_FAKE_PROVIDER'),
      ['--endpoint', `unix://${join(dir, 'fake.sock')}`, '--config', config],
      /listening on/,
    );
  });
  after(async () => {
    await provider?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('gets the Version answer', async () => {
    const c = client();
    try {
      expect(await c.version('fake')).to.deep.equal({
        version: 'v1alpha1',
        runtime_name: 'fakeprovider',
        runtime_version: '0.0.10',
      });
    } finally {
      c.close();
    }
  });

  it('gets the Mount answer, and refuses one over --max-call-recv-msg-size as RESOURCE_EXHAUSTED', async () => {
    const request = {
      attributes: '{}',
      secrets: '{}',
      target_path: '/t',
      permission: '420',
      current_object_version: [],
    };
    const roomy = client();
    const small = client(16 * 1024);
    try {
      const answer = await roomy.mount('fake', request);
      expect(answer.object_version).to.deep.equal([{ id: 'secret/big', version: 'v1' }]);
      expect(answer.files.map((f) => [f.path, f.mode, f.contents.length])).to.deep.equal([['big', 0o644, 64 * 1024]]);
      const err = (await rejection(small.mount('fake', request))) as SscError;
      expect([err.kind, err.reason, err.message]).to.deep.equal([
        'resource-exhausted',
        'ProviderResponseTooLarge',
        `provider "fake" Mount: response larger than --max-call-recv-msg-size (${16 * 1024} bytes)`,
      ]);
    } finally {
      roomy.close();
      small.close();
    }
  });
});
