import { expect } from 'chai';
import { once } from 'node:events';
import { lstat, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { untilLogged as logged } from '../../bin/child-process.js';
import { runCli } from '../support/cli-run.js';
import { CAN_MOUNT, fileClass, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { readAs, reachableTarget, VOLUME_RECORD, walk, withGroup } from '../support/mount-group.js';

// fsGroup ownership: a kubelet-like client passes the pod's fsGroup as
// volume_mount_group; the real driver writes the file provider's files for that group.

/** Group and user ids no account here has: the pod's fsGroup, a pod user, a stranger. */
const FS_GROUP = 43001;
const OTHER_GROUP = 43002;
const POD_USER = 43101;
const STRANGER = 43102;
const classes = {
  'app.yaml': fileClass('app', [
    { objectName: 'db-password', sourcePath: 'db/password', mode: '0400' },
    { objectName: 'shared', mode: '0440' },
    { objectName: 'api/token', sourcePath: 'api/token' },
  ]),
};
const providerFiles = { 'db/password': 'hunter2\n', shared: 'for the group', 'api/token': 'tok-1' };

// Giving files to a group the driver is not in needs root (CAP_CHOWN), as the driver has on a node.
(CAN_MOUNT ? describe : describe.skip)(
  'fsGroup ownership: volume_mount_group (real driver and file provider)',
  function () {
    this.timeout(60_000);
    let stack: DriverStack;

    before(async () => {
      // Rotation on with a long interval: every republish below falls inside it, so it
      // also proves a changed group is never skipped as "fresh".
      stack = await startDriverStack({
        classes,
        providerFiles,
        driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1h'],
      });
    });
    after(async () => {
      await stack?.stop();
    });

    it('advertises the node capability VOLUME_MOUNT_GROUP', async () => {
      expect(await stack.client.nodeCapabilities()).to.deep.equal(['VOLUME_MOUNT_GROUP']);
    });

    it('writes files, directories, links, ..data, .metadata and the tmpfs root for the group, with group read added', async () => {
      const target = await reachableTarget(stack, 'grouped');
      await stack.client.publish(withGroup(stack.request(target, 'app', 'grouped'), String(FS_GROUP)));
      const entries = walk(target);
      expect(entries.filter((e) => e.gid !== FS_GROUP).map((e) => e.path)).to.deep.equal([]);
      const data = await readlink(join(target, '..data'));
      const modes = Object.fromEntries(
        entries.filter((e) => !e.link).map((e) => [e.path.replace(data, '<payload>'), e.mode.toString(8)]),
      );
      expect(modes).to.deep.equal({
        '.': '2755',
        '<payload>': '2755',
        '<payload>/api': '2755',
        '<payload>/.metadata': '2755',
        '<payload>/db-password': '440',
        '<payload>/shared': '440',
        '<payload>/api/token': '644',
        '<payload>/.metadata/db-password': '644',
        '<payload>/.metadata/shared': '644',
        '<payload>/.metadata/api%2Ftoken': '644',
        '<payload>/.metadata/versions.json': '644',
      });
      expect(entries.filter((e) => e.link).map((e) => e.path)).to.have.members([
        '..data',
        'db-password',
        'shared',
        'api',
        '.metadata',
      ]);
    });

    it('lets a non-root process in the group read a 0440 file, and nobody else', async () => {
      const target = stack.targetPath('grouped');
      expect(await readAs(join(target, 'db-password'), POD_USER, FS_GROUP)).to.deep.equal({
        code: 0,
        out: 'hunter2\n',
      });
      expect(await readAs(join(target, 'shared'), POD_USER, FS_GROUP)).to.deep.equal({ code: 0, out: 'for the group' });
      const stranger = await readAs(join(target, 'db-password'), STRANGER, OTHER_GROUP);
      expect(stranger.code).to.not.equal(0);
      expect(stranger.out).to.match(/Permission denied/);
      expect(stranger.out).not.to.include('hunter2');
      // The default 0644 file stays readable by everyone, as without a group.
      expect((await readAs(join(target, 'api/token'), STRANGER, OTHER_GROUP)).code).to.equal(0);
    });

    it('rewrites nothing on a republish with the same content, modes and group', async () => {
      const target = stack.targetPath('grouped');
      const data = await readlink(join(target, '..data'));
      await stack.client.publish(withGroup(stack.request(target, 'app', 'grouped'), String(FS_GROUP)));
      expect(await readlink(join(target, '..data'))).to.equal(data);
    });

    it('rewrites ownership when a republish names another group: the old group loses access', async () => {
      const target = stack.targetPath('grouped');
      const data = await readlink(join(target, '..data'));
      await stack.client.publish(withGroup(stack.request(target, 'app', 'grouped'), String(OTHER_GROUP)));
      expect(await readlink(join(target, '..data'))).not.to.equal(data);
      expect(
        walk(target)
          .filter((e) => e.gid !== OTHER_GROUP)
          .map((e) => e.path),
      ).to.deep.equal([]);
      expect((await readAs(join(target, 'db-password'), POD_USER, FS_GROUP)).code).to.not.equal(0);
      expect(await readAs(join(target, 'db-password'), POD_USER, OTHER_GROUP)).to.deep.equal({
        code: 0,
        out: 'hunter2\n',
      });
      await stack.client.unpublish('vol-grouped', target);
    });

    it("without volume_mount_group writes as before: the driver's group and the provider's modes", async () => {
      const target = await reachableTarget(stack, 'plain');
      await stack.client.publish(stack.request(target, 'app', 'plain'));
      expect(
        walk(target)
          .filter((e) => e.gid !== process.getgid?.())
          .map((e) => e.path),
      ).to.deep.equal([]);
      const data = await readlink(join(target, '..data'));
      expect(walk(target).find((e) => e.path === `${data}/db-password`)?.mode).to.equal(0o400);
      expect(walk(target).find((e) => e.path === '.')?.mode).to.equal(0o755);
      expect((await readAs(join(target, 'db-password'), POD_USER, FS_GROUP)).code).to.not.equal(0);
      await stack.client.unpublish('vol-plain', target);
    });

    it('the publish CLI sends --volume-mount-group as volume_mount_group', async () => {
      const target = stack.targetPath('cli');
      const endpoint = `--endpoint=unix://${stack.socketPath}`;
      const bad = await runCli([
        'publish',
        endpoint,
        `--target-path=${target}`,
        '--secret-provider-class=app',
        '--volume-mount-group=staff',
      ]);
      expect([bad.code, bad.stderr]).to.deep.equal([
        2,
        'secrets-store-csi: NodePublishVolume failed: INVALID_ARGUMENT: volume_capability.mount.volume_mount_group "staff" is not a group id: send the pod\'s fsGroup as a decimal number from 0 to 2147483647\n',
      ]);
      const ok = await runCli([
        'publish',
        endpoint,
        `--target-path=${target}`,
        '--secret-provider-class=app',
        `--volume-mount-group=${FS_GROUP}`,
      ]);
      expect([ok.code, ok.stdout]).to.deep.equal([0, `published ${target}\n`]);
      expect(
        walk(target)
          .filter((e) => e.gid !== FS_GROUP)
          .map((e) => e.path),
      ).to.deep.equal([]);
      expect((await runCli(['unpublish', endpoint, `--target-path=${target}`])).code).to.equal(0);
    });

    const refused: [string, string][] = [
      ['not a number', 'staff'],
      ['negative', '-1'],
      ['past int32', '2147483648'],
      ['hexadecimal', '0x10'],
    ];
    for (const [name, gid] of refused) {
      it(`refuses a volume_mount_group that is ${name} with INVALID_ARGUMENT naming the field, mounting nothing`, async () => {
        const target = stack.targetPath(`bad-${name.replace(/\W/g, '')}`);
        const err = await stack.client.publish(withGroup(stack.request(target, 'app', 'bad'), gid)).then(
          () => undefined,
          (e: { code: number; details: string }) => e,
        );
        expect(err?.code).to.equal(3);
        expect(err?.details).to.equal(
          `volume_capability.mount.volume_mount_group ${JSON.stringify(gid)} is not a group id: send the pod's fsGroup as a decimal number from 0 to 2147483647`,
        );
        expect(
          await lstat(target).then(
            () => 'created',
            () => 'nothing',
          ),
        ).to.equal('nothing');
      });
    }
  },
);

(CAN_MOUNT ? describe : describe.skip)(
  'fsGroup ownership survives rotation in local mode (real driver and file provider)',
  function () {
    this.timeout(60_000);
    const driverArgs = ['--enable-secret-rotation', '--rotation-poll-interval=1s'];
    let stack: DriverStack;
    let restarted: DriverStack | undefined;

    before(async () => {
      stack = await startDriverStack({ classes, providerFiles: { ...providerFiles }, driverArgs });
    });
    after(async () => {
      await (restarted ?? stack)?.stop();
    });

    it('a rotation writes the new content for the same group', async () => {
      const target = await reachableTarget(stack, 'rot');
      await stack.client.publish(withGroup(stack.request(target, 'app', 'rot'), String(FS_GROUP)));
      await writeFile(join(stack.providerRoot, 'db/password'), 'rotated-1\n');
      await logged(stack.driver, /"message":"volume rotated"/);
      expect(await readAs(join(target, 'db-password'), POD_USER, FS_GROUP)).to.deep.equal({
        code: 0,
        out: 'rotated-1\n',
      });
      expect(
        walk(target)
          .filter((e) => e.gid !== FS_GROUP)
          .map((e) => e.path),
      ).to.deep.equal([]);
      expect(JSON.parse(await readFile(join(target, VOLUME_RECORD), 'utf8'))).to.include({ mountGroup: FS_GROUP });
    });

    it('after SIGKILL and a restart, rotation still writes for the group (from the volume record)', async () => {
      const target = stack.targetPath('rot');
      const exited = once(stack.driver.process, 'exit');
      stack.driver.process.kill('SIGKILL');
      await exited;
      restarted = await startDriverStack({ reuse: stack, classes, driverArgs });
      await logged(restarted.driver, /"message":"resuming rotation of a volume published before the restart"/);
      await writeFile(join(stack.providerRoot, 'db/password'), 'rotated-2\n');
      await logged(restarted.driver, /"message":"volume rotated"/);
      expect(await readAs(join(target, 'db-password'), POD_USER, FS_GROUP)).to.deep.equal({
        code: 0,
        out: 'rotated-2\n',
      });
      expect(
        walk(target)
          .filter((e) => e.gid !== FS_GROUP)
          .map((e) => e.path),
      ).to.deep.equal([]);
      expect((await readAs(join(target, 'db-password'), STRANGER, OTHER_GROUP)).code).to.not.equal(0);
    });
  },
);
