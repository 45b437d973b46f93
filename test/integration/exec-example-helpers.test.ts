import { expect } from 'chai';
import { chmod, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import { peerBinary } from '../support/peers.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';

// The example helpers of examples/helpers/, copied unchanged into the exec provider's
// --helpers-dir: file-get.sh over a directory next to it, and bao-kv.sh against a real
// OpenBao dev server (the openbao peer) with a node token whose policy reaches only some
// namespaces' paths.

const EXAMPLES = fileURLToPath(new URL('../../../examples/helpers/', import.meta.url));

function pod(namespace: string, name = 'web-0'): Record<string, string> {
  return {
    'csi.storage.k8s.io/pod.namespace': namespace,
    'csi.storage.k8s.io/pod.name': name,
    'csi.storage.k8s.io/serviceAccount.name': 'web',
  };
}

async function install(helpersDir: string, name: string): Promise<void> {
  await copyFile(join(EXAMPLES, name), join(helpersDir, name));
  await chmod(join(helpersDir, name), 0o755);
}

describe('exec provider example helper file-get.sh', function () {
  this.timeout(60_000);
  let provider: ProviderProcess;
  let store: string;

  before(async () => {
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      { extraArgs: (work) => [`--helpers-dir=${join(work, 'helpers')}`] },
    );
    const helpers = join(provider.work, 'helpers');
    store = join(helpers, 'file-get.d');
    await mkdir(join(store, 'db'), { recursive: true });
    await install(helpers, 'file-get.sh');
    await writeFile(join(store, 'db', 'password'), 'hunter2\n');
    await writeFile(join(provider.work, 'outside'), 'not yours');
    await symlink(join(provider.work, 'outside'), join(store, 'escape'));
  });
  after(async () => {
    await provider?.stop();
  });

  const objects = (path: string) =>
    `- {objectName: password, helper: file-get.sh, parameters: {path: ${JSON.stringify(path)}}}`;

  it('serves a file under file-get.d/ with a digest version that follows its content', async () => {
    const first = await provider.mount({ objects: objects('db/password'), ...pod('team-a') });
    expect(Buffer.from(first.files[0]?.contents ?? []).toString()).to.equal('hunter2\n');
    const v1 = first.object_version[0]?.version;
    expect(v1).to.match(/^[0-9a-f]{64}$/);
    const unchanged = await provider.mount(
      { objects: objects('db/password'), ...pod('team-a') },
      { current: { password: v1 as string } },
    );
    expect(unchanged.files).to.deep.equal([]);
    await writeFile(join(store, 'db', 'password'), 'hunter3\n');
    const changed = await provider.mount(
      { objects: objects('db/password'), ...pod('team-a') },
      { current: { password: v1 as string } },
    );
    expect(Buffer.from(changed.files[0]?.contents ?? []).toString()).to.equal('hunter3\n');
    expect(changed.object_version[0]?.version).to.not.equal(v1);
  });

  // Every parameter value is redacted from stderr, the path too (the class's values are not the helper's to show).
  const refused: [string, string, string, RegExp][] = [
    [
      'a path with ..',
      '../../outside',
      'FAILED_PRECONDITION',
      /exited with 64: parameter path must be a relative path inside file-get\.d without \.\.$/,
    ],
    ['an absolute path', '/etc/passwd', 'FAILED_PRECONDITION', /exited with 64/],
    [
      'a symlink leading outside',
      'escape',
      'FAILED_PRECONDITION',
      /exited with 64: parameter path leads outside file-get\.d$/,
    ],
    [
      'a missing file',
      'db/nope',
      'NOT_FOUND',
      /helper "file-get\.sh" get "password" exited with 66: no file \[redacted\] in file-get\.d$/,
    ],
  ];
  for (const [name, path, code, message] of refused) {
    it(`refuses ${name}: ${code}`, async () => {
      const err = await provider.mountError({ objects: objects(path), ...pod('team-a') });
      expect(err.code).to.equal(code);
      expect(err.details, err.details).to.match(message);
      expect(err.details).to.not.include('not yours');
    });
  }
});

describe('exec provider example helper bao-kv.sh against OpenBao', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let provider: ProviderProcess;
  let nodeToken: string;

  const objects =
    '- {objectName: db-password, helper: bao-kv.sh, filePermission: 0400, parameters: {path: db, field: password}}\n- {objectName: db-user, helper: bao-kv.sh, parameters: {path: db, field: user}}\n';

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the bao-kv.sh tests: ${unavailable}\n`);
      this.skip();
    }
    bao = await startOpenBao();
    await bao.putPolicy(
      'exec-node',
      'path "secret/data/team-a/*" { capabilities = ["read"] }\npath "secret/metadata/team-a/*" { capabilities = ["read"] }\npath "secret/data/team-b/*" { capabilities = ["read"] }\npath "secret/metadata/team-b/*" { capabilities = ["read"] }\n',
    );
    nodeToken =
      (await bao.write('auth/token/create', { policies: ['exec-node'], ttl: '1h' }))?.auth?.client_token ?? '';
    expect(nodeToken).to.not.equal('');
    await bao.write('secret/data/team-a/db', { data: { password: 'correct horse', user: 'app' } });
    await bao.write('secret/data/team-c/db', { data: { password: 'other team', user: 'c' } });
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      { extraArgs: (work) => [`--helpers-dir=${join(work, 'helpers')}`, '--helper-timeout=20s'] },
    );
    const helpers = join(provider.work, 'helpers');
    await mkdir(helpers, { recursive: true });
    await install(helpers, 'bao-kv.sh');
    await writeFile(join(provider.work, 'node-token'), nodeToken);
    await writeFile(
      join(helpers, 'bao-kv.conf'),
      `BAO=${peerBinary('BAO') ?? ''}\nVAULT_ADDR=${bao.address}\nTOKEN_FILE=${join(provider.work, 'node-token')}\n`,
    );
  });
  after(async () => {
    await provider?.stop();
    await bao?.stop();
  });

  it("get: each field of the pod namespace's secret; version: its KV version", async () => {
    const res = await provider.mount({ objects, ...pod('team-a') });
    expect(res.files.map((f) => [f.path, f.mode, Buffer.from(f.contents).toString()])).to.deep.equal([
      ['db-password', 0o400, 'correct horse'],
      ['db-user', 0o644, 'app'],
    ]);
    expect(res.object_version.map((v) => [v.id, v.version])).to.deep.equal([
      ['db-password', '1'],
      ['db-user', '1'],
    ]);
  });

  it('rotation: unchanged KV version → no files; a new version → the new value', async () => {
    const targetPath = '/var/lib/kubelet/pods/bao/volumes/v';
    await provider.mount({ objects, ...pod('team-a') }, { targetPath });
    const unchanged = await provider.mount(
      { objects, ...pod('team-a') },
      { targetPath, current: { 'db-password': '1', 'db-user': '1' } },
    );
    expect(unchanged.files).to.deep.equal([]);
    await bao.write('secret/data/team-a/db', { data: { password: 'battery staple', user: 'app' } });
    const rotated = await provider.mount(
      { objects, ...pod('team-a') },
      { targetPath, current: { 'db-password': '1', 'db-user': '1' } },
    );
    expect(rotated.files.map((f) => [f.path, Buffer.from(f.contents).toString()])).to.deep.equal([
      ['db-password', 'battery staple'],
      ['db-user', 'app'],
    ]);
    expect(rotated.object_version.map((v) => v.version)).to.deep.equal(['2', '2']);
  });

  it("scoped to the pod's namespace: team-b has no such secret (NOT_FOUND), team-c's path is refused (PERMISSION_DENIED); the node token never shows", async () => {
    const missing = await provider.mountError({ objects, ...pod('team-b') });
    expect(missing.code).to.equal('NOT_FOUND');
    expect(missing.details, missing.details).to.match(
      /^exec provider: helper "bao-kv\.sh" version "db-(password|user)" exited with 66: no secret or field at secret\/team-b\/\[redacted\]$/,
    );
    const refused = await provider.mountError({ objects, ...pod('team-c') });
    expect(refused.code).to.equal('PERMISSION_DENIED');
    expect(refused.details).to.match(/exited with 77: openbao refused secret\/team-c\/\[redacted\]$/);
    for (const details of [missing.details, refused.details])
      expect(details).to.not.include(nodeToken).and.not.include('other team');
    expect(provider.child.stderr()).to.not.include(nodeToken);
  });

  it('a field the secret lacks: NOT_FOUND', async () => {
    const err = await provider.mountError({
      objects: '- {objectName: x, helper: bao-kv.sh, parameters: {path: db, field: nope}}',
      ...pod('team-a'),
    });
    expect(err.code).to.equal('NOT_FOUND');
    expect(err.details, err.details).to.match(
      /helper "bao-kv\.sh" get "x" exited with 66: no secret or field at secret\/team-a\/\[redacted\]$/,
    );
  });
});
