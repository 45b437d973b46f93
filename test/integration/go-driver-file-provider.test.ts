import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countLogged } from '../../bin/child-process.js';
import { failure, outcome } from '../support/call-outcome.js';
import { mountsUnder } from '../support/driver-stack.js';
import {
  goDriverUnavailable,
  startGoDriverStack,
  type GoDriverProvider,
  type GoDriverStack,
} from '../support/go-driver.js';
import type { InlinePod } from '../support/inline-pod.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';

/** Our `file` provider behind the Go driver: its source tree and HMAC key live in the stack's work dir. */
const fileProvider: GoDriverProvider = {
  name: 'file',
  args: (work) => [`--root=${join(work, 'file-root')}`, `--hmac-key-file=${join(work, 'hmac.key')}`],
};

/**
 * Users may keep upstream's Go driver v1.6.1 and adopt our providers: our `file` provider
 * under the real Go driver (built by test/peers/install.sh), with the real kube-apiserver.
 */
describe("our file provider under upstream's Go driver v1.6.1 (real Go driver, kube-apiserver)", function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: GoDriverStack;
  let ns: string;
  let plain: InlinePod;
  let withRef: InlinePod;

  /** The version our file provider gives these contents: HMAC-SHA256 under its key. */
  async function versionOf(contents: string): Promise<string> {
    return createHmac('sha256', await readFile(join(stack.work, 'hmac.key')))
      .update(contents)
      .digest('hex');
  }

  const podStatus = (pod: InlinePod, spc: string) => readPodStatus(cluster, ns, pod.name, spc);

  before(async function () {
    const unavailable = goDriverUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the Go driver tests: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'godriver');
    await createSecretProviderClass(cluster, ns, 'app', {
      provider: 'file',
      parameters: {
        objects:
          '- objectName: db-password\n  sourcePath: db/password\n  mode: "0400"\n- objectName: api/token\n  sourcePath: api/token\n',
      },
    });
    await createSecretProviderClass(cluster, ns, 'broken', {
      provider: 'file',
      parameters: { objects: '- objectName: absent\n  sourcePath: not/there\n' },
    });
    stack = await startGoDriverStack({
      cluster,
      providers: [fileProvider],
      rotation: true,
      async prepare(work) {
        await mkdir(join(work, 'file-root/db'), { recursive: true });
        await mkdir(join(work, 'file-root/api'), { recursive: true });
        await writeFile(join(work, 'file-root/db/password'), 'hunter2\n');
        await writeFile(join(work, 'file-root/api/token'), 'tok-1');
      },
    });
    plain = await stack.pod({ namespace: ns, name: 'plain', spc: 'app', tokenAudiences: ['secrets-store-test'] });
    withRef = await stack.pod({
      namespace: ns,
      name: 'with-ref',
      spc: 'app',
      nodePublishSecret: { username: 'app', password: 'ref-secret' },
    });
  });
  after(async () => {
    await stack?.stop();
  });

  it('mounts for a pod without nodePublishSecretRef (the Go driver sends secrets "null")', async () => {
    await stack.client.publish(await plain.publishRequest());
    expect(await readFile(join(plain.targetPath, 'db-password'), 'utf8')).to.equal('hunter2\n');
    expect(await readFile(join(plain.targetPath, 'api/token'), 'utf8')).to.equal('tok-1');
    expect(await mountsUnder(plain.targetPath)).to.deep.equal([plain.targetPath]);
  });

  it('mounts for a pod with a nodePublishSecretRef', async () => {
    await stack.client.publish(await withRef.publishRequest());
    expect(await readFile(join(withRef.targetPath, 'db-password'), 'utf8')).to.equal('hunter2\n');
    expect(countLogged(stack.providers.get('file') ?? stack.driver, /"message":"mount served"/)).to.equal(2);
  });

  it("writes files with our modes in upstream's layout: ..data, one timestamped dir, top-level links, no .metadata", async () => {
    const target = plain.targetPath;
    const data = await readlink(join(target, '..data'));
    expect(data).to.match(/^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$/);
    expect((await readdir(target)).sort()).to.deep.equal(['..data', data, 'api', 'db-password'].sort());
    expect(await readlink(join(target, 'db-password'))).to.equal('..data/db-password');
    expect(await readlink(join(target, 'api'))).to.equal('..data/api');
    expect((await readdir(join(target, data))).sort()).to.deep.equal(['api', 'db-password']);
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect((await stat(join(target, 'api/token'))).mode & 0o777).to.equal(0o644);
    expect(
      await lstat(join(target, '.metadata')).then(
        () => 'present',
        () => 'absent',
      ),
    ).to.equal('absent');
  });

  it("records a SecretProviderClassPodStatus with our provider's versions", async () => {
    const status = await podStatus(plain, 'app');
    expect(status.metadata.labels['internal.secrets-store.csi.k8s.io/node-name']).to.equal(stack.nodeName);
    expect(status.metadata.ownerReferences.map((o) => [o.kind, o.name, o.uid])).to.deep.equal([
      ['Pod', 'plain', plain.uid],
    ]);
    expect(status.status).to.include({
      podName: 'plain',
      secretProviderClassName: 'app',
      mounted: true,
      targetPath: plain.targetPath,
    });
    expect(status.status.objects).to.deep.equal([
      { id: 'api/token', version: await versionOf('tok-1') },
      { id: 'db-password', version: await versionOf('hunter2\n') },
    ]);
    expect((await podStatus(withRef, 'app')).status.objects).to.deep.equal(status.status.objects);
  });

  it("rotates through kubelet's republish: new content in the file and the pod status", async () => {
    const target = plain.targetPath;
    const before = await readlink(join(target, '..data'));
    await writeFile(join(stack.work, 'file-root/db/password'), 'correct horse\n');
    await stack.client.publish(await plain.publishRequest());
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse\n');
    expect(await readlink(join(target, '..data'))).not.to.equal(before);
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    // Upstream v1.6.1 sends no current_object_version on publish (MountContent gets nil),
    // so our provider has nothing to compare and logs no "object changed".
    expect(countLogged(stack.providers.get('file') ?? stack.driver, /"message":"object changed"/)).to.equal(0);
    const objects = (await podStatus(plain, 'app')).status.objects;
    expect(objects.find((o) => o.id === 'db-password')?.version).to.equal(await versionOf('correct horse\n'));
    expect(await mountsUnder(target)).to.deep.equal([target]);
  });

  it('keeps the last content when our provider fails a republish (upstream masks remount errors, kubernetes#121271)', async () => {
    const target = plain.targetPath;
    const before = await readlink(join(target, '..data'));
    const file = stack.providers.get('file') ?? stack.driver;
    const failed = countLogged(file, /"message":"mount failed"/);
    await rm(join(stack.work, 'file-root/db/password'));
    expect((await outcome(stack.client.publish(await plain.publishRequest()))).code).to.equal('OK');
    expect(countLogged(file, /"message":"mount failed"/)).to.equal(failed + 1);
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse\n');
    expect(await readlink(join(target, '..data'))).to.equal(before);
    await writeFile(join(stack.work, 'file-root/db/password'), 'correct horse\n');
  });

  it("fails a first mount with our provider's message when an object is missing, leaving nothing mounted", async () => {
    const pod = await stack.pod({ namespace: ns, name: 'broken', spc: 'broken' });
    const result = await failure(stack.client.publish(await pod.publishRequest()));
    expect(result.code).to.equal('NOT_FOUND');
    expect(result.message).to.include(`failed to mount secrets store objects for pod ${ns}/broken`);
    expect(result.message).to.include('file provider: object "absent" (sourcePath "not/there") not found');
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    const status = await podStatus(pod, 'broken').then(
      () => 'written',
      (err: { code?: number }) => err.code,
    );
    expect(status).to.equal(404);
  });

  it('unpublishes: the mounts are gone', async () => {
    for (const pod of [plain, withRef]) {
      await stack.client.unpublish(pod.volumeId, pod.targetPath);
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    }
  });
});
