import { expect } from 'chai';
import { readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { untilLogged as logged } from '../../bin/child-process.js';
import { fileClass, startDriverStack, type DriverStack } from '../support/driver-stack.js';
import { responseWith, startScriptedProvider, type ScriptedProvider } from '../support/scripted-provider.js';

describe('rotation reconciler in local mode (real driver, file provider)', function () {
  this.timeout(60_000);
  let stack: DriverStack;
  let scripted: ScriptedProvider;

  before(async () => {
    stack = await startDriverStack({
      classes: {
        'app.yaml': fileClass('app', [{ objectName: 'token', sourcePath: 'token' }]),
        'flaky.yaml': fileClass('flaky', [{ objectName: 'x' }], 'scripted'),
      },
      providerFiles: { token: 'v1' },
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
    });
    scripted = await startScriptedProvider(stack.providersDir, 'scripted', async () =>
      responseWith([{ path: 'x', contents: 'good' }]),
    );
  });
  after(async () => {
    await scripted?.stop();
    await stack?.stop();
  });

  it('follows a change in the store without a republish, atomically, with a new version', async () => {
    const target = stack.targetPath('rot');
    await stack.client.publish(stack.request(target, 'app', 'rot'));
    const version = await readFile(join(target, '.metadata/token'), 'utf8');
    await writeFile(join(stack.providerRoot, 'token'), 'v2');
    await logged(stack.driver, /"message":"volume rotated"/);
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('v2');
    expect(await readFile(join(target, '.metadata/token'), 'utf8')).not.to.equal(version);
  });

  it('rewrites nothing in rounds where nothing changed', async () => {
    const target = stack.targetPath('rot');
    const data = await readlink(join(target, '..data'));
    const rounds = (stack.driver.stderr().match(/"message":"rotation round done"/g) ?? []).length;
    await logged(stack.driver, /"message":"rotation round done"/, rounds + 2);
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect(await stack.metrics()).to.match(
      /^rotation_reconcile_total\{provider="file",os_type="linux",rotated="false"\} [1-9]\d*$/m,
    );
    expect(await stack.metrics()).to.match(
      /^rotation_reconcile_total\{provider="file",os_type="linux",rotated="true"\} 1$/m,
    );
  });

  it('keeps the old content when a refresh fails, and counts the error', async () => {
    const target = stack.targetPath('flaky');
    await stack.client.publish(stack.request(target, 'flaky', 'flaky'));
    scripted.script = async () => ({
      ...responseWith([{ path: 'x', contents: 'bad' }]),
      error: { code: 'VaultSealed' },
    });
    const failedMetric =
      /^rotation_reconcile_error_total\{provider="scripted",os_type="linux",error_type="VaultSealed",rotated="false"\} [1-9]\d*$/m;
    while (!failedMetric.test(await stack.metrics())) {
      await logged(
        stack.driver,
        /"message":"rotation round done"/,
        (stack.driver.stderr().match(/"message":"rotation round done"/g) ?? []).length + 1,
      );
    }
    expect(await readFile(join(target, 'x'), 'utf8')).to.equal('good');
    scripted.script = async () => responseWith([{ path: 'x', contents: 'good' }]);
    await stack.client.unpublish('vol-flaky', target);
  });

  it('forgets a volume after NodeUnpublishVolume: rotation never mounts it again', async () => {
    const keeper = stack.targetPath('keeper');
    await stack.client.publish(stack.request(keeper, 'app', 'keeper'));
    const target = stack.targetPath('rot');
    await stack.client.unpublish('vol-rot', target);
    const rounds = (stack.driver.stderr().match(/"message":"rotation round done"/g) ?? []).length;
    await logged(stack.driver, /"message":"rotation round done"/, rounds + 2);
    expect(
      await readFile(join(target, 'token')).then(
        () => 'mounted again',
        () => 'gone',
      ),
    ).to.equal('gone');
    await stack.client.unpublish('vol-keeper', keeper);
  });
});

describe('kubelet republish with rotation on (requiresRepublish compatibility)', function () {
  let stack: DriverStack;
  before(async () => {
    stack = await startDriverStack({
      classes: { 'app.yaml': fileClass('app', [{ objectName: 'token' }]) },
      providerFiles: { token: 'v1' },
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1h'],
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('is a cheap no-op inside the interval: the provider is not asked again', async () => {
    const target = stack.targetPath('rep');
    await stack.client.publish(stack.request(target, 'app', 'rep'));
    await writeFile(join(stack.providerRoot, 'token'), 'v2');
    await stack.client.publish(stack.request(target, 'app', 'rep'));
    expect(await readFile(join(target, 'token'), 'utf8')).to.equal('v1');
    await stack.client.unpublish('vol-rep', target);
  });
});

describe('objects removed from the store (file provider missingObjects: omit)', function () {
  this.timeout(60_000);
  let stack: DriverStack;
  before(async () => {
    const cls = `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: omit
  namespace: default
spec:
  provider: file
  parameters:
    missingObjects: omit
    objects: |
      - objectName: keep
      - objectName: drop
`;
    stack = await startDriverStack({
      classes: { 'omit.yaml': cls },
      providerFiles: { keep: 'k', drop: 'd' },
      driverArgs: ['--enable-secret-rotation', '--rotation-poll-interval=1s'],
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('removes the file and its .metadata when the source is deleted, keeping the rest', async () => {
    const target = stack.targetPath('omit');
    await stack.client.publish(stack.request(target, 'omit', 'omit'));
    expect(await readFile(join(target, 'drop'), 'utf8')).to.equal('d');
    await rm(join(stack.providerRoot, 'drop'));
    await logged(stack.driver, /"message":"volume rotated"/);
    expect(
      await readFile(join(target, 'drop')).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
    expect(
      await readFile(join(target, '.metadata/drop')).then(
        () => 'kept',
        () => 'removed',
      ),
    ).to.equal('removed');
    expect(await readFile(join(target, 'keep'), 'utf8')).to.equal('k');
    await stack.client.unpublish('vol-omit', target);
  });
});
