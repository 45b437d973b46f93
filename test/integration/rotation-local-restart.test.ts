import { expect } from 'chai';
import { once } from 'node:events';
import { readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { untilLogged as logged } from '../../bin/child-process.js';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { CAN_MOUNT, fileClass, startDriverStack, type DriverStack } from '../support/driver-stack.js';

/** The record file name the driver keeps in each local-mode volume (driver/rotation/volume-record.ts). */
const RECORD = '..secrets-store-volume.json';
const SECRET_VALUE = 'hunter2-node-publish-secret';
const TOKEN_VALUE = 'eyJ-service-account-token';

/** A publish request that carries a nodePublishSecretRef and service-account tokens, as kubelet sends them. */
function withCredentials(request: NodePublishVolumeRequest): NodePublishVolumeRequest {
  const tokens = JSON.stringify({ vault: { token: TOKEN_VALUE, expirationTimestamp: '2030-01-01T00:00:00Z' } });
  return {
    ...request,
    secrets: { password: SECRET_VALUE },
    volume_context: { ...request.volume_context, 'csi.storage.k8s.io/serviceAccount.tokens': tokens },
  };
}

/** Kills the stack's driver with SIGKILL (no shutdown code runs) and waits for it to be gone. */
async function killDriver(stack: DriverStack): Promise<void> {
  const exited = once(stack.driver.process, 'exit');
  stack.driver.process.kill('SIGKILL');
  await exited;
}

for (const mountMode of (CAN_MOUNT ? ['tmpfs', 'dir'] : ['dir']) as ('tmpfs' | 'dir')[]) {
  describe(`local mode resumes rotation after the driver is killed (--mount-mode=${mountMode}, real driver, file provider)`, function () {
    this.timeout(60_000);
    const driverArgs = ['--enable-secret-rotation', '--rotation-poll-interval=1s'];
    const classes = { 'app.yaml': fileClass('app', [{ objectName: 'token' }, { objectName: 'other' }]) };
    let stack: DriverStack;
    let restarted: DriverStack | undefined;

    before(async () => {
      stack = await startDriverStack({ classes, providerFiles: { token: 'v1', other: 'same' }, driverArgs, mountMode });
    });
    after(async () => {
      await (restarted ?? stack)?.stop();
    });

    it("records each volume without a secret, 0600 and owned by the driver's user", async () => {
      const plain = stack.targetPath('plain');
      const credentialed = stack.targetPath('cred');
      await stack.client.publish(stack.request(plain, 'app', 'plain'));
      await stack.client.publish(withCredentials(stack.request(credentialed, 'app', 'cred')));
      for (const target of [plain, credentialed]) {
        const s = await stat(join(target, RECORD));
        expect(s.mode & 0o777).to.equal(0o600);
        expect(s.uid).to.equal(process.getuid?.());
      }
      const record = await readFile(join(credentialed, RECORD), 'utf8');
      expect(record).not.to.contain(SECRET_VALUE);
      expect(record).not.to.contain(TOKEN_VALUE);
      expect(record).not.to.contain('serviceAccount.tokens');
      expect(record).not.to.contain('password');
      expect(JSON.parse(record)).to.include({
        spcName: 'app',
        volumeId: 'vol-cred',
        targetPath: credentialed,
        withheld: true,
      });
      expect(JSON.parse(record).pod).to.deep.equal({
        name: 'cred',
        namespace: 'default',
        uid: 'uid-cred',
        serviceAccountName: 'default',
      });
      // The pod sees its files and the record, nothing else new.
      expect((await readdir(plain)).filter((n) => !n.startsWith('..2'))).to.have.members([
        '..data',
        '.metadata',
        'token',
        'other',
        RECORD,
      ]);
    });

    it('after SIGKILL and a restart, rotates a volume published before, without a republish and without rewriting unchanged files', async () => {
      const plain = stack.targetPath('plain');
      const credentialed = stack.targetPath('cred');
      const dataBefore = await readlink(join(plain, '..data'));
      await killDriver(stack);
      restarted = await startDriverStack({ reuse: stack, classes, driverArgs, mountMode });
      await logged(restarted.driver, /"message":"rotation round done"/);
      expect(restarted.driver.stderr()).to.match(
        /"message":"resuming rotation of a volume published before the restart"/,
      );
      expect(await readlink(join(plain, '..data')), 'an unchanged round rewrote the volume').to.equal(dataBefore);

      await writeFile(join(stack.providerRoot, 'token'), 'v2');
      await logged(restarted.driver, /"message":"volume rotated"/);
      expect(await readFile(join(plain, 'token'), 'utf8')).to.equal('v2');
      expect(await readFile(join(plain, 'other'), 'utf8')).to.equal('same');

      // Its secrets were never recorded: the other volume waits for its client's next publish.
      expect(await readFile(join(credentialed, 'token'), 'utf8')).to.equal('v1');
      await restarted.client.publish(withCredentials(stack.request(credentialed, 'app', 'cred')));
      expect(await readFile(join(credentialed, 'token'), 'utf8')).to.equal('v2');

      await restarted.client.unpublish('vol-plain', plain);
      await restarted.client.unpublish('vol-cred', credentialed);
      expect(
        await stat(plain).then(
          () => 'kept',
          () => 'gone',
        ),
      ).to.equal('gone');
    });
  });
}
