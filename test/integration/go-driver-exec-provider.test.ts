import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodePublishVolumeRequest } from '../../proto/gen/csi/v1/NodePublishVolumeRequest.js';
import { digestVersion } from '../../providers/exec/exec-provider.js';
import { parseExecParameters } from '../../providers/exec/parameters.js';
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
import { ServiceAccountTokenIssuer, tokensAttribute } from '../support/service-account-tokens.js';

// Our `exec` provider behind upstream's Go driver v1.6.1 (go-driver.ts: the Go driver on
// a CSI socket, classes, pods and pod status objects in the shared kube-apiserver, our
// CsiClient sending kubelet's NodePublishVolume), running real helpers from a temp
// --helpers-dir: the example file-get.sh with its file-get.d/, a `versioned.sh` with a
// `version` subcommand, and `probe`, which prints the argv and environment names it got,
// so the test sees exactly what reached a helper through the Go driver.
//
// Pod identity: Kubernetes allows only DNS names for pods, namespaces and service
// accounts, so the `;`, `$(…)`, newline and leading `-` of exec-provider.test.ts cannot
// come through a real API server. The pod and service account here use what it allows
// that a careless shell would still split or misread (dots, `--`), and the test checks
// each arrives as one argv entry, unchanged.
//
// Tokens: no kubelet runs, so the test signs the pod's token for the audience a
// CSIDriver's tokenRequests would name and puts it where kubelet puts it (volume_context),
// as go-driver-azure-provider.test.ts does; the Go driver copies it into the Mount.
//
// Rotation: the Go driver v1.6.1 sends no current_object_version (its only Mount passes
// nil oldObjectVersions, see go-driver-azure-provider.test.ts), so every republish is a
// full Mount: every helper's `version` and then `get` run, even when nothing changed. Its
// atomic writer then keeps the files (same ..data, same inode) when every byte is equal.

const EXAMPLES = fileURLToPath(new URL('../../../examples/helpers/', import.meta.url));
const AUDIENCE = 'exec-helpers';
/** Allowed by Kubernetes (DNS subdomains), and still a test of quoting: dots, `--`. */
const POD_NAME = 'web-0.canary--a';
const SERVICE_ACCOUNT = 'build.bot--1';
const PASSWORD = 'hunter2-exec';
const ROTATED = 'correct horse exec';
const LOGIN_PASSWORD = 'pw-S3CRET-login';

/** What `probe` prints as its `get` output. */
interface Probe {
  readonly argv: string[];
  readonly envNames: string[];
  readonly tokens: string | null;
}

describe("our exec provider under upstream's Go driver v1.6.1 (real Go driver, kube-apiserver, real helpers)", function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let stack: GoDriverStack;
  let ns: string;
  let helpers: string;
  let store: string;
  let calls: string;
  let web: InlinePod;
  let tok: InlinePod;
  const issuer = new ServiceAccountTokenIssuer();
  const sentTokens: string[] = [];
  let appObjects = '';

  /** kubelet's request for `pod` with a (test-signed) token for AUDIENCE in volume_context, as the CSIDriver's tokenRequests make kubelet send. */
  async function withToken(pod: InlinePod): Promise<NodePublishVolumeRequest> {
    const request = await pod.publishRequest();
    const token = issuer.token(`${ns}/${SERVICE_ACCOUNT}`, AUDIENCE);
    sentTokens.push(token);
    return {
      ...request,
      volume_context: { ...request.volume_context, [TOKENS_KEY]: tokensAttribute(token, AUDIENCE) },
    };
  }

  const podStatus = (pod: InlinePod, spc: string) => readPodStatus(cluster, ns, pod.name, spc);

  /** The keyed digest our provider gives `objectName` of the app class with `contents`. */
  async function digestOf(objectName: string, contents: string | Buffer): Promise<string> {
    const object = parseExecParameters({ objects: appObjects }).objects.find((o) => o.objectName === objectName);
    if (!object) throw new Error(`no object ${objectName}`);
    return digestVersion(await readFile(join(stack.work, 'hmac.key')), object, Buffer.from(contents));
  }

  /** Helper calls logged since the log was last cleared, as `<operation> <objectName>`, sorted. */
  async function helperCalls(): Promise<string[]> {
    return existsSync(calls)
      ? (await readFile(calls, 'utf8'))
          .trim()
          .split('\n')
          .filter((l) => l !== '')
          .sort()
      : [];
  }

  async function helper(name: string, script: string): Promise<void> {
    await writeFile(join(helpers, name), script);
    await chmod(join(helpers, name), 0o755);
  }

  before(async function () {
    const unavailable = goDriverUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the exec provider under the Go driver: ${unavailable}\n`);
      this.skip();
    }
    cluster = await sharedKubeCluster();
    ns = await createNamespace(cluster, 'goexec');
    await cluster.admin.core.createNamespacedServiceAccount({
      namespace: ns,
      body: { metadata: { name: SERVICE_ACCOUNT } },
    });
    const execProvider: GoDriverProvider = {
      name: 'exec',
      args: (work) => [
        `--helpers-dir=${join(work, 'helpers')}`,
        `--hmac-key-file=${join(work, 'hmac.key')}`,
        '--helper-timeout=2s',
      ],
    };
    stack = await startGoDriverStack({
      cluster,
      providers: [execProvider],
      rotation: true,
      async prepare(work) {
        helpers = join(work, 'helpers');
        store = join(work, 'store');
        calls = join(work, 'calls.log');
        await mkdir(join(helpers, 'file-get.d', 'db'), { recursive: true });
        await mkdir(store);
        await copyFile(join(EXAMPLES, 'file-get.sh'), join(helpers, 'file-get.sh'));
        await chmod(join(helpers, 'file-get.sh'), 0o755);
        await writeFile(join(helpers, 'file-get.d', 'db', 'password'), PASSWORD);
        await writeFile(join(helpers, 'file-get.d', 'motd'), 'hello\n');
        // Prints its argv, the names of its environment and the tokens JSON (null when not
        // given); logs each call. Node, not sh: a shell adds PWD and SHLVL of its own.
        await helper(
          'probe',
          `#!${process.execPath}
const fs = require('node:fs');
const argv = process.argv.slice(2);
fs.appendFileSync(process.env.SSC_PARAM_LOG, argv[0] + ' ' + argv[1] + '\\n');
if (argv[0] === 'version') process.exit(3);
process.stdout.write(JSON.stringify({ argv, envNames: Object.keys(process.env).sort(), tokens: process.env.SSC_SERVICE_ACCOUNT_TOKENS ?? null }));
`,
        );
        // Versions kept in a store directory: <name>.version next to <name>; logs each call.
        await helper(
          'versioned.sh',
          '#!/bin/sh\necho "$1 $2" >> "$SSC_PARAM_LOG"\ncase "$1" in\n  version) cat "$SSC_PARAM_DIR/$2.version" ;;\n  get) cat "$SSC_PARAM_DIR/$2" ;;\n  *) exit 64 ;;\nesac\n',
        );
        await helper(
          'slow.sh',
          '#!/bin/sh\n[ "$1" = version ] && exit 3\necho "waiting for lock $SSC_PARAM_LOCK" >&2\nexec sleep 60\n',
        );
        await helper(
          'refuses.sh',
          '#!/bin/sh\n[ "$1" = version ] && exit 3\necho "login as $SSC_PARAM_USER with $SSC_PARAM_PASSWORD refused" >&2\nexit 77\n',
        );
      },
    });
    await writeFile(join(store, 'api-key'), 'k-1');
    await writeFile(join(store, 'api-key.version'), '1\n');
    appObjects = `- objectName: db-password
  helper: file-get.sh
  filePermission: 0400
  parameters: {path: db/password}
- objectName: motd
  helper: file-get.sh
  parameters: {path: motd}
- objectName: api-key
  helper: versioned.sh
  filePermission: 0440
  parameters: {dir: ${store}, log: ${calls}}
- objectName: whoami.json
  helper: probe
  parameters: {log: ${calls}, region: eu-1}
`;
    const classOf = (objects: string, extra: Record<string, string> = {}) => ({
      provider: 'exec',
      parameters: { objects, ...extra },
    });
    await createSecretProviderClass(cluster, ns, 'app', classOf(appObjects));
    await createSecretProviderClass(
      cluster,
      ns,
      'tokens',
      classOf(`- {objectName: whoami.json, helper: probe, parameters: {log: ${calls}}}\n`, {
        passServiceAccountTokens: 'true',
      }),
    );
    await createSecretProviderClass(
      cluster,
      ns,
      'missing',
      classOf('- {objectName: absent, helper: file-get.sh, parameters: {path: db/absent}}\n'),
    );
    await createSecretProviderClass(
      cluster,
      ns,
      'slow',
      classOf(
        '- {objectName: db-password, helper: file-get.sh, parameters: {path: db/password}}\n- {objectName: token, helper: slow.sh, parameters: {lock: /run/lock/vault-agent}}\n',
      ),
    );
    await createSecretProviderClass(
      cluster,
      ns,
      'refused',
      classOf(`- {objectName: api, helper: refuses.sh, parameters: {user: svc-login, password: ${LOGIN_PASSWORD}}}\n`),
    );
    web = await stack.pod({ namespace: ns, name: POD_NAME, spc: 'app', serviceAccountName: SERVICE_ACCOUNT });
    tok = await stack.pod({ namespace: ns, name: 'tok', spc: 'tokens', serviceAccountName: SERVICE_ACCOUNT });
  });
  after(async () => {
    await stack?.stop();
  });

  it("publishes each helper's output with its filePermission or 0644 (real modes on the Go driver's tmpfs)", async () => {
    await stack.client.publish(await withToken(web));
    const target = web.targetPath;
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal(PASSWORD);
    expect(await readFile(join(target, 'motd'), 'utf8')).to.equal('hello\n');
    expect(await readFile(join(target, 'api-key'), 'utf8')).to.equal('k-1');
    const mode = async (name: string) => (await stat(join(target, name))).mode & 0o777;
    expect(await mode('db-password')).to.equal(0o400);
    expect(await mode('api-key')).to.equal(0o440);
    expect(await mode('motd')).to.equal(0o644);
    expect(await mode('whoami.json')).to.equal(0o644);
    expect(await mountsUnder(target)).to.deep.equal([target]);
    // Every object's `version` ran before its `get` (sorted here; file-get.sh logs nothing).
    expect(await helperCalls()).to.deep.equal([
      'get api-key',
      'get whoami.json',
      'version api-key',
      'version whoami.json',
    ]);
  });

  it("the pod's namespace, name and service account reach the helper as separate argv entries, unchanged; the environment is the clean one, without tokens unless the class opts in", async () => {
    const probe = JSON.parse(await readFile(join(web.targetPath, 'whoami.json'), 'utf8')) as Probe;
    expect(probe.argv).to.deep.equal(['get', 'whoami.json', ns, POD_NAME, SERVICE_ACCOUNT]);
    // The Mount carried a token (volume_context), and the class did not opt in.
    expect(probe.envNames).to.deep.equal(['HOME', 'LANG', 'PATH', 'SSC_PARAM_LOG', 'SSC_PARAM_REGION']);
    expect(probe.tokens).to.equal(null);
  });

  it('passServiceAccountTokens: "true": the tokens JSON the Go driver copied from volume_context reaches the helper exactly', async () => {
    const request = await withToken(tok);
    await stack.client.publish(request);
    const probe = JSON.parse(await readFile(join(tok.targetPath, 'whoami.json'), 'utf8')) as Probe;
    expect(probe.argv).to.deep.equal(['get', 'whoami.json', ns, 'tok', SERVICE_ACCOUNT]);
    expect(probe.envNames).to.deep.equal(['HOME', 'LANG', 'PATH', 'SSC_PARAM_LOG', 'SSC_SERVICE_ACCOUNT_TOKENS']);
    expect(probe.tokens).to.equal(request.volume_context?.[TOKENS_KEY]);
    expect(JSON.parse(probe.tokens ?? '{}')[AUDIENCE].token).to.equal(sentTokens.at(-1));
  });

  it('passServiceAccountTokens: "true" with the token in `secrets` (CSIServiceAccountTokenSecrets): the Go driver copies it the same way', async () => {
    const pod = await stack.pod({
      namespace: ns,
      name: 'tok-secrets',
      spc: 'tokens',
      serviceAccountName: SERVICE_ACCOUNT,
    });
    const request = await pod.publishRequest();
    const token = issuer.token(`${ns}/${SERVICE_ACCOUNT}`, AUDIENCE);
    sentTokens.push(token);
    const tokens = tokensAttribute(token, AUDIENCE);
    await stack.client.publish({ ...request, secrets: { ...request.secrets, [TOKENS_KEY]: tokens } });
    const probe = JSON.parse(await readFile(join(pod.targetPath, 'whoami.json'), 'utf8')) as Probe;
    expect(probe.argv).to.deep.equal(['get', 'whoami.json', ns, 'tok-secrets', SERVICE_ACCOUNT]);
    expect(probe.tokens).to.equal(tokens);
    await stack.client.unpublish(pod.volumeId, pod.targetPath);
    expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
  });

  it("records the objectNames as ids in the SecretProviderClassPodStatus, with the helper's `version` or the keyed HMAC of the content", async () => {
    const status = await podStatus(web, 'app');
    expect(status.status).to.include({
      podName: POD_NAME,
      secretProviderClassName: 'app',
      mounted: true,
      targetPath: web.targetPath,
    });
    const objects = [...status.status.objects].sort((a, b) => a.id.localeCompare(b.id));
    expect(objects).to.deep.equal([
      { id: 'api-key', version: '1' },
      { id: 'db-password', version: await digestOf('db-password', PASSWORD) },
      { id: 'motd', version: await digestOf('motd', 'hello\n') },
      {
        id: 'whoami.json',
        version: await digestOf('whoami.json', await readFile(join(web.targetPath, 'whoami.json'))),
      },
    ]);
    expect(objects.map((o) => o.version).join(' ')).not.to.include(PASSWORD);
  });

  it("republish after the store changed (kubelet's requiresRepublish, --enable-secret-rotation): new files and versions, modes kept", async () => {
    await writeFile(join(helpers, 'file-get.d', 'db', 'password'), ROTATED);
    await writeFile(join(store, 'api-key'), 'k-2');
    await writeFile(join(store, 'api-key.version'), '2\n');
    const before = await readlink(join(web.targetPath, '..data'));
    const motdVersion = (await podStatus(web, 'app')).status.objects.find((o) => o.id === 'motd')?.version;
    await stack.client.publish(await withToken(web));
    const target = web.targetPath;
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal(ROTATED);
    expect(await readFile(join(target, 'api-key'), 'utf8')).to.equal('k-2');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect((await stat(join(target, 'api-key'))).mode & 0o777).to.equal(0o440);
    expect(await readlink(join(target, '..data'))).not.to.equal(before);
    const objects = (await podStatus(web, 'app')).status.objects;
    expect(objects.find((o) => o.id === 'db-password')?.version).to.equal(await digestOf('db-password', ROTATED));
    expect(objects.find((o) => o.id === 'api-key')?.version).to.equal('2');
    expect(objects.find((o) => o.id === 'motd')?.version).to.equal(motdVersion);
    expect(await mountsUnder(target)).to.deep.equal([target]);
  });

  it('republish with nothing changed: with no current_object_version every `version` and `get` runs again; the atomic writer keeps the files and the pod status is unchanged', async () => {
    const target = web.targetPath;
    const before = {
      data: await readlink(join(target, '..data')),
      ino: (await stat(join(target, '..data', 'db-password'))).ino,
    };
    const statusBefore = await podStatus(web, 'app');
    await rm(calls, { force: true });
    await stack.client.publish(await withToken(web));
    // Under our driver (current versions sent) an unchanged versioned.sh object gets no
    // `get` (exec-provider-driver.test.ts); the Go driver never says what is mounted.
    expect(await helperCalls()).to.deep.equal([
      'get api-key',
      'get whoami.json',
      'version api-key',
      'version whoami.json',
    ]);
    expect(await readlink(join(target, '..data'))).to.equal(before.data);
    expect((await stat(join(target, '..data', 'db-password'))).ino).to.equal(before.ino);
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal(ROTATED);
    const statusAfter = await podStatus(web, 'app');
    expect(statusAfter.status).to.deep.equal(statusBefore.status);
    expect(statusAfter.metadata.resourceVersion).to.equal(statusBefore.metadata.resourceVersion);
  });

  it('a helper failing on a republish: the Go driver masks the error (OK), the mounted files and pod status stay', async () => {
    const target = web.targetPath;
    const data = await readlink(join(target, '..data'));
    const statusBefore = await podStatus(web, 'app');
    await rm(join(store, 'api-key.version'));
    try {
      await stack.client.publish(await withToken(web));
    } finally {
      await writeFile(join(store, 'api-key.version'), '2\n');
    }
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect(await readFile(join(target, 'api-key'), 'utf8')).to.equal('k-2');
    expect((await podStatus(web, 'app')).metadata.resourceVersion).to.equal(statusBefore.metadata.resourceVersion);
    expect(await mountsUnder(target)).to.deep.equal([target]);
    // The only trace is the Go driver's log line, with the store dir (a parameter) redacted.
    const logged = stack.driver
      .stderr()
      .split('\n')
      .filter((l) => l.includes('failed to mount secrets store object content'));
    expect(logged).to.have.length(1);
    expect(logged[0])
      .to.include('isRemountRequest=true')
      .and.include(
        'code = FailedPrecondition desc = exec provider: helper \\"versioned.sh\\" version \\"api-key\\" exited with 1: cat: [redacted]/api-key.version: No such file or directory',
      )
      .and.not.include(store);
  });

  // A failing first publish: the provider's code through the Go driver's wrapping, the
  // helper's stderr line with every parameter value redacted, nothing mounted, no pod status.
  const FIRST_PUBLISH_FAILURES = [
    {
      what: 'a helper exiting 66',
      name: 'missing',
      code: 'NOT_FOUND',
      hidden: ['db/absent'],
      text: 'exec provider: helper "file-get.sh" get "absent" exited with 66: no file [redacted] in file-get.d',
    },
    {
      what: 'a helper running past --helper-timeout (no partial files)',
      name: 'slow',
      code: 'DEADLINE_EXCEEDED',
      hidden: ['/run/lock/vault-agent'],
      text: 'exec provider: helper "slow.sh" get "token" ran longer than 2000 ms and was killed: waiting for lock [redacted]',
    },
    {
      what: 'a helper exiting 77 with a password on stderr',
      name: 'refused',
      code: 'PERMISSION_DENIED',
      hidden: [LOGIN_PASSWORD, 'svc-login'],
      text: 'exec provider: helper "refuses.sh" get "api" exited with 77: login as [redacted] with [redacted] refused',
    },
  ];
  for (const c of FIRST_PUBLISH_FAILURES) {
    it(`${c.what}: ${c.code} through the Go driver with the redacted stderr line, nothing mounted`, async () => {
      const pod = await stack.pod({ namespace: ns, name: c.name, spc: c.name });
      const started = Date.now();
      const result = await failure(stack.client.publish(await withToken(pod)));
      expect(Date.now() - started).to.be.below(20_000);
      expect(result.code).to.equal(c.code);
      expect(result.message)
        .to.include(`failed to mount secrets store objects for pod ${ns}/${c.name}`)
        .and.include(c.text);
      for (const secret of [...c.hidden, ...sentTokens]) {
        expect(result.message).not.to.include(secret);
        expect(stack.driver.stderr()).not.to.include(secret);
      }
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
      expect(existsSync(join(pod.targetPath, 'db-password'))).to.equal(false);
      expect(
        await podStatus(pod, c.name).then(
          () => 'written',
          (err: { code?: number }) => err.code,
        ),
      ).to.equal(404);
    });
  }

  it('the provider logged no token, password or file content', () => {
    const log = stack.providers.get('exec')?.stderr() ?? '';
    expect(log).to.include('mount served');
    for (const secret of [...sentTokens, PASSWORD, ROTATED, LOGIN_PASSWORD]) expect(log).not.to.include(secret);
  });

  it('unpublishes: the mounts are gone', async () => {
    for (const pod of [web, tok]) {
      await stack.client.unpublish(pod.volumeId, pod.targetPath);
      expect(await mountsUnder(pod.targetPath)).to.deep.equal([]);
    }
  });
});
