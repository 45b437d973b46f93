import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { parseObjects } from '../../providers/vault/objects.js';
import { objectVersion } from '../../providers/vault/render.js';
import { failure } from '../support/call-outcome.js';
import { mountsUnder } from '../support/driver-stack.js';
import {
  goDriverUnavailable,
  startGoDriverStack,
  type GoDriverProvider,
  type GoDriverStack,
} from '../support/go-driver.js';
import { TOKENS_KEY, type InlinePod } from '../support/inline-pod.js';
import { createNamespace, sharedKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { createSecretProviderClass, readPodStatus } from '../support/kube-objects.js';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { enableJwtAuth, type JwtAuth } from '../support/vault-provider.js';

// Our `vault` provider behind upstream's Go driver v1.6.1 (local, fake-kubelet mode as
// go-driver.ts runs it: the Go driver on a CSI socket, classes and pods in the real
// kube-apiserver, our CsiClient sending kubelet's NodePublishVolume), reading from a real
// OpenBao with JWT auth. No kubelet runs here, so nobody mints the pod's token for the
// CSIDriver's tokenRequests: the test signs a JWT for the pod's service account with the
// key OpenBao's JWT auth trusts, a stand-in for the token kubelet would mint, and puts it
// where kubelet puts it: csi.storage.k8s.io/serviceAccount.tokens in volume_context, or
// (CSIServiceAccountTokenSecrets, Kubernetes 1.35) in `secrets`. The Go driver copies the
// attribute into the Mount's parameters either way (nodeserver.go getServiceAccountTokens).

/**
 * Our vault provider behind the Go driver; its HMAC key lives in the stack's work dir. No
 * read cache (--read-cache-window=0): the republish test changes the secret and republishes
 * at once, well within the default 5 s window.
 */
const vaultProvider: GoDriverProvider = {
  name: 'vault',
  args: (work) => [`--hmac-key-file=${join(work, 'hmac.key')}`, '--vault-mount=jwt', '--read-cache-window=0'],
};

const APP_OBJECTS = `- objectName: db-password
  secretPath: secret/data/app/db
  secretKey: password
  filePermission: 0400
- objectName: api/config.json
  secretPath: secret/app/api
`;

describe("our vault provider under upstream's Go driver v1.6.1 (real Go driver, kube-apiserver, OpenBao with JWT auth)", function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let bao: OpenBao;
  let jwt: JwtAuth;
  let stack: GoDriverStack;
  let ns: string;
  let web: InlinePod;
  let viaSecrets: InlinePod;

  /** kubelet's request for `pod` with the pod's (test-signed) token for audience vault, where kubelet puts it. */
  async function withToken(
    pod: InlinePod,
    where: 'volume_context' | 'secrets' = 'volume_context',
  ): Promise<NodePublishVolumeRequest> {
    const request = await pod.publishRequest();
    const tokens = jwt.tokensAttribute(jwt.token(`${ns}/default`));
    return where === 'volume_context'
      ? { ...request, volume_context: { ...request.volume_context, [TOKENS_KEY]: tokens } }
      : { ...request, secrets: { ...request.secrets, [TOKENS_KEY]: tokens } };
  }

  /** The version our vault provider gives `objectName` of APP_OBJECTS with `contents`: its keyed HMAC. */
  async function versionOf(objectName: string, contents: string): Promise<string> {
    const object = parseObjects(APP_OBJECTS).objects.find((o) => o.objectName === objectName);
    if (!object) throw new Error(`no object ${objectName}`);
    return objectVersion(await readFile(join(stack.work, 'hmac.key')), object, Buffer.from(contents));
  }

  const podStatus = (pod: InlinePod, spc: string) => readPodStatus(cluster, ns, pod.name, spc);

  before(async function () {
    const unavailable = goDriverUnavailable() ?? openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the vault provider under the Go driver: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'govault');
    bao = await startOpenBao();
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'], outsider: [] });
    await bao.write('secret/data/app/db', { data: { password: 'hunter2', user: 'app' } });
    await bao.write('secret/data/app/api', { data: { token: 'tok-1', scopes: ['read'] } });
    const classOf = (roleName: string, objects: string) => ({
      provider: 'vault',
      parameters: { vaultAddress: bao.address, roleName, objects },
    });
    await createSecretProviderClass(cluster, ns, 'app', classOf('app', APP_OBJECTS));
    await createSecretProviderClass(
      cluster,
      ns,
      'denied',
      classOf('outsider', '- {objectName: db-password, secretPath: secret/data/app/db, secretKey: password}\n'),
    );
    await createSecretProviderClass(
      cluster,
      ns,
      'missing',
      classOf('app', '- {objectName: absent, secretPath: secret/data/app/absent}\n'),
    );
    stack = await startGoDriverStack({ cluster, providers: [vaultProvider], rotation: true });
    web = await stack.pod({ namespace: ns, name: 'web', spc: 'app' });
    viaSecrets = await stack.pod({ namespace: ns, name: 'web-secrets', spc: 'app' });
  });
  after(async () => {
    await stack?.stop();
    await bao?.stop();
  });

  it('publishes: the files with their names, modes and contents (token in volume_context, as kubelet sends it today)', async () => {
    await stack.client.publish(await withToken(web));
    const target = web.targetPath;
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2');
    expect(await readFile(join(target, 'api/config.json'), 'utf8')).to.equal('{"scopes":["read"],"token":"tok-1"}');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect((await stat(join(target, 'api/config.json'))).mode & 0o777).to.equal(0o644);
    expect(await mountsUnder(target)).to.deep.equal([target]);
  });

  it('publishes with the token in `secrets` (CSIServiceAccountTokenSecrets): the Go driver passes it on the same way', async () => {
    await stack.client.publish(await withToken(viaSecrets, 'secrets'));
    expect(await readFile(join(viaSecrets.targetPath, 'db-password'), 'utf8')).to.equal('hunter2');
  });

  it('records our keyed HMAC versions in the SecretProviderClassPodStatus, never a bare hash', async () => {
    const status = await podStatus(web, 'app');
    expect(status.status).to.include({
      podName: 'web',
      secretProviderClassName: 'app',
      mounted: true,
      targetPath: web.targetPath,
    });
    const objects = [...status.status.objects].sort((a, b) => a.id.localeCompare(b.id));
    expect(objects).to.deep.equal([
      { id: 'api/config.json', version: await versionOf('api/config.json', '{"scopes":["read"],"token":"tok-1"}') },
      { id: 'db-password', version: await versionOf('db-password', 'hunter2') },
    ]);
    expect(objects.map((o) => o.version)).not.to.include(createHash('sha256').update('hunter2').digest('hex'));
    expect((await podStatus(viaSecrets, 'app')).status.objects).to.have.deep.members(objects);
  });

  it("republish after the secret changes in OpenBao (kubelet's requiresRepublish, --enable-secret-rotation): new content and version", async () => {
    const apiVersion = (await podStatus(web, 'app')).status.objects.find((o) => o.id === 'api/config.json')?.version;
    await bao.write('secret/data/app/db', { data: { password: 'correct horse', user: 'app' } });
    await stack.client.publish(await withToken(web));
    expect(await readFile(join(web.targetPath, 'db-password'), 'utf8')).to.equal('correct horse');
    expect((await stat(join(web.targetPath, 'db-password'))).mode & 0o777).to.equal(0o400);
    const objects = (await podStatus(web, 'app')).status.objects;
    expect(objects.find((o) => o.id === 'db-password')?.version).to.equal(
      await versionOf('db-password', 'correct horse'),
    );
    expect(objects.find((o) => o.id === 'api/config.json')?.version).to.equal(apiVersion);
    expect(await mountsUnder(web.targetPath)).to.deep.equal([web.targetPath]);
  });

  it('a role whose policies refuse the path: PERMISSION_DENIED through the Go driver, naming the path and role, no secret, nothing mounted', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'denied', spc: 'denied' });
    const result = await failure(stack.client.publish(await withToken(pod)));
    expect(result.code).to.equal('PERMISSION_DENIED');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/denied`)
      .and.include('"secret/data/app/db"')
      .and.include('role "outsider"');
    expect(result.message).not.to.include('hunter2').and.not.include('correct horse');
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    expect(
      await podStatus(pod, 'denied').then(
        () => 'written',
        (err: { code?: number }) => err.code,
      ),
    ).to.equal(404);
  });

  it('a missing path: NOT_FOUND through the Go driver, naming the path', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'missing', spc: 'missing' });
    const result = await failure(stack.client.publish(await withToken(pod)));
    expect(result.code).to.equal('NOT_FOUND');
    expect(result.message)
      .to.include(`failed to mount secrets store objects for pod ${ns}/missing`)
      .and.include('secret "secret/data/app/absent" not found');
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
  });

  it('no token for audience vault (the CSIDriver lacks tokenRequests): FAILED_PRECONDITION naming the audience', async () => {
    const pod = await stack.pod({ namespace: ns, name: 'no-token', spc: 'app' });
    const result = await failure(stack.client.publish(await pod.publishRequest()));
    expect(result.code).to.equal('FAILED_PRECONDITION');
    expect(result.message).to.include('{audience: "vault"}').and.include('tokenRequests');
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
  });

  it('unpublishes: the mounts are gone', async () => {
    for (const pod of [web, viaSecrets]) {
      await stack.client.unpublish(pod.volumeId, pod.targetPath);
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    }
  });
});
