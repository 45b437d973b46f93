import { expect } from 'chai';
import { lstat, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CAN_MOUNT, fileClass, mountsUnder, startDriverStack, type DriverStack } from '../support/driver-stack.js';

describe('NodePublishVolume with the file provider (real driver and provider processes)', function () {
  let stack: DriverStack;

  before(async () => {
    stack = await startDriverStack({
      classes: {
        'app.yaml': fileClass('app', [
          { objectName: 'db-password', sourcePath: 'db/password', mode: '0400' },
          { objectName: 'api/token', sourcePath: 'api/token' },
        ]),
      },
      providerFiles: { 'db/password': 'hunter2\n', 'api/token': 'tok-1' },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('mounts a tmpfs (as root) and writes the files with their bytes and modes', async () => {
    const target = stack.targetPath('pod-a');
    await stack.client.publish(stack.request(target, 'app', 'pod-a'));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2\n');
    expect(await readFile(join(target, 'api/token'), 'utf8')).to.equal('tok-1');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect((await stat(join(target, 'api/token'))).mode & 0o777).to.equal(0o644);
    expect((await lstat(join(target, 'db-password'))).isSymbolicLink()).to.equal(true);
    expect(await readlink(join(target, '..data'))).to.match(/^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\./);
    if (CAN_MOUNT) expect(await mountsUnder(target)).to.deep.equal([target]);
  });

  it('writes .metadata with one file per object and versions.json, without revealing content', async () => {
    const target = stack.targetPath('pod-a');
    const doc = JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as {
      objects: { id: string; version: string }[];
      writeTime: string;
    };
    expect(doc.objects.map((o) => o.id)).to.deep.equal(['api/token', 'db-password']);
    for (const o of doc.objects) {
      expect(o.version).to.match(/^[0-9a-f]{64}$/);
      expect(o.version).not.to.include('hunter2');
    }
    expect(await readFile(join(target, '.metadata/api%2Ftoken'), 'utf8')).to.equal(doc.objects[0]?.version);
    expect(Date.parse(doc.writeTime)).to.be.greaterThan(0);
  });

  it('does not rewrite anything when a republish finds the same content', async () => {
    const target = stack.targetPath('pod-a');
    const before = await readlink(join(target, '..data'));
    await stack.client.publish(stack.request(target, 'app', 'pod-a'));
    expect(await readlink(join(target, '..data'))).to.equal(before);
  });

  it('swaps in changed content atomically on republish and updates the version', async () => {
    const target = stack.targetPath('pod-a');
    const oldVersion = await readFile(join(target, '.metadata/db-password'), 'utf8');
    const oldData = await readlink(join(target, '..data'));
    await writeFile(join(stack.providerRoot, 'db/password'), 'correct horse\n');
    await stack.client.publish(stack.request(target, 'app', 'pod-a'));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse\n');
    expect(await readFile(join(target, '.metadata/db-password'), 'utf8')).not.to.equal(oldVersion);
    expect(await readlink(join(target, '..data'))).not.to.equal(oldData);
    expect(
      await lstat(join(target, oldData)).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
  });

  it('unpublishes: unmounts, removes the directory, and is idempotent', async () => {
    const target = stack.targetPath('pod-a');
    await stack.client.unpublish('vol-pod-a', target);
    expect(
      await lstat(target).then(
        () => 'exists',
        () => 'gone',
      ),
    ).to.equal('gone');
    expect(await mountsUnder(target)).to.deep.equal([]);
    await stack.client.unpublish('vol-pod-a', target);
    await stack.client.unpublish('vol-never', stack.targetPath('never-published'));
  });

  it('counts publishes and unpublishes in /metrics with upstream names and labels', async () => {
    const text = await stack.metrics();
    expect(text).to.match(/^node_publish_total\{provider="file",os_type="linux"\} 3$/m);
    expect(text).to.match(/^node_unpublish_total\{os_type="linux"\} 3$/m);
    // The process's one registry: the default process and Node.js metrics on the same page.
    expect(text).to.match(/^process_resident_memory_bytes \d+$/m);
    expect(text).to.match(/^nodejs_eventloop_lag_p50_seconds /m);
  });
});
