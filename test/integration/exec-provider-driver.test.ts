import { expect } from 'chai';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { metadataFileName } from '../../driver/volume/metadata.js';
import {
  driverLogSince,
  rotationRoundsSince,
  startDriverStack,
  whenDriverLogs,
  type DriverStack,
} from '../support/driver-stack.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';

// The exec provider process behind our real driver process (local mode: classes from
// --spc-dir, tmpfs targets when root), rotation every second. Helpers: one with a
// `version` subcommand reading versions from a store directory (logging each call), and
// the example file-get.sh (digest versions). Checked: the publish's files, modes and
// .metadata/ versions; a new version rotated in; unchanged rounds that run no `get`,
// rewrite nothing and keep the same ..data; a content change under file-get.sh rotated in
// through its digest; a helper failing during rotation keeping the content whole.
// Waits are on the driver's log lines (it logs every rotation round), never fixed sleeps.

const EXAMPLES = fileURLToPath(new URL('../../../examples/helpers/', import.meta.url));

interface VersionsJson {
  readonly objects: readonly { readonly id: string; readonly version: string }[];
}

describe('exec provider behind the real driver (local mode, rotation)', function () {
  this.timeout(120_000);
  let work: string;
  let stack: DriverStack;
  let provider: ProviderProcess;
  let store: string;
  let log: string;
  let files: string;

  function execClass(name: string, objects: string): string {
    return `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${name}
  namespace: default
spec:
  provider: exec
  parameters:
    objects: |
${objects
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
`;
  }

  const roundsSince = (since: number) => rotationRoundsSince(stack, since);
  const refreshFailed = (target: string, since: number) =>
    driverLogSince(stack, since).some((e) => e['message'] === 'rotation refresh failed' && e['targetPath'] === target);
  const readVersions = async (target: string) =>
    JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as VersionsJson;
  const versionOf = async (target: string, id: string) =>
    (await readVersions(target)).objects.find((o) => o.id === id)?.version;
  const calls = async () => (existsSync(log) ? (await readFile(log, 'utf8')).trim().split('\n') : []);

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-exec-driver-'));
    const helpers = join(work, 'helpers');
    store = join(work, 'store');
    log = join(work, 'calls.log');
    files = join(helpers, 'file-get.d');
    await mkdir(files, { recursive: true });
    await mkdir(store, { recursive: true });
    await writeFile(
      join(helpers, 'versioned.sh'),
      '#!/bin/sh\necho "$1 $2 $4" >> "$SSC_PARAM_LOG"\ncase "$1" in\n  version) cat "$SSC_PARAM_DIR/$2.version" ;;\n  get) cat "$SSC_PARAM_DIR/$2" ;;\n  *) exit 64 ;;\nesac\n',
    );
    await chmod(join(helpers, 'versioned.sh'), 0o755);
    await copyFile(join(EXAMPLES, 'file-get.sh'), join(helpers, 'file-get.sh'));
    await chmod(join(helpers, 'file-get.sh'), 0o755);
    await writeFile(join(store, 'db-password'), 'hunter2');
    await writeFile(join(store, 'db-password.version'), '1\n');
    await writeFile(join(store, 'api-key'), 'k-1');
    await writeFile(join(store, 'api-key.version'), '1\n');
    await writeFile(join(files, 'motd'), 'hello v1\n');
    const versioned = (name: string, mode?: string) =>
      `- objectName: ${name}\n  helper: versioned.sh\n${mode ? `  filePermission: ${mode}\n` : ''}  parameters: {dir: ${store}, log: ${log}}`;
    stack = await startDriverStack({
      work,
      classes: {
        'exec-app.yaml': execClass(
          'exec-app',
          `${versioned('db-password', '0400')}\n${versioned('api-key')}\n- {objectName: motd, helper: file-get.sh, parameters: {path: motd}}`,
        ),
      },
      driverArgs: [
        '--enable-secret-rotation',
        '--rotation-poll-interval=1s',
        '--provider-timeout=10s',
        '--log-level=info',
      ],
    });
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      {
        providersDir: stack.providersDir,
        extraArgs: () => [
          `--helpers-dir=${helpers}`,
          `--hmac-key-file=${join(work, 'hmac.key')}`,
          '--helper-timeout=5s',
        ],
      },
    );
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
  });

  it("publish: each helper's output with its mode, .metadata/ with the helper versions and the digest", async () => {
    const target = stack.targetPath('app');
    await stack.client.publish(stack.request(target, 'exec-app', 'app'));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect(await readFile(join(target, 'api-key'), 'utf8')).to.equal('k-1');
    expect((await stat(join(target, 'api-key'))).mode & 0o777).to.equal(0o644);
    expect(await readFile(join(target, 'motd'), 'utf8')).to.equal('hello v1\n');
    const versions = (await readVersions(target)).objects;
    expect(versions.filter((v) => v.id !== 'motd')).to.deep.equal([
      { id: 'api-key', version: '1' },
      { id: 'db-password', version: '1' },
    ]);
    expect(versions.find((v) => v.id === 'motd')?.version).to.match(/^[0-9a-f]{64}$/);
    expect(await readFile(join(target, '.metadata', metadataFileName('db-password')), 'utf8')).to.equal('1');
    expect(await calls()).to.include.members(['version db-password app', 'get db-password app']);
  });

  it('unchanged rounds run only `version` for helpers that have it, and rewrite nothing', async () => {
    const target = stack.targetPath('app');
    const data = await readlink(join(target, '..data'));
    const file = await stat(join(target, 'db-password'));
    const before = (await calls()).length;
    const since = Date.now();
    await whenDriverLogs(stack, 'three rotation rounds', () => roundsSince(since) >= 3);
    const during = (await calls()).slice(before);
    expect(during.length).to.be.greaterThan(0);
    expect(
      during.filter((c) => c.startsWith('get ')),
      'no get while versions are unchanged',
    ).to.deep.equal([]);
    expect(await readlink(join(target, '..data'))).to.equal(data);
    const now = await stat(join(target, 'db-password'));
    expect([now.ino, now.mtimeMs]).to.deep.equal([file.ino, file.mtimeMs]);
  });

  it('a new helper version is rotated in without a republish', async () => {
    const target = stack.targetPath('app');
    await writeFile(join(store, 'db-password'), 'correct horse');
    await writeFile(join(store, 'db-password.version'), '2\n');
    await whenDriverLogs(
      stack,
      'db-password at version 2',
      async () => (await versionOf(target, 'db-password')) === '2',
    );
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect(await versionOf(target, 'api-key')).to.equal('1');
  });

  it('a changed file under file-get.sh (digest versions) is rotated in', async () => {
    const target = stack.targetPath('app');
    const before = await versionOf(target, 'motd');
    await writeFile(join(files, 'motd'), 'hello v2\n');
    await whenDriverLogs(stack, "motd's new digest", async () => (await versionOf(target, 'motd')) !== before);
    expect(await readFile(join(target, 'motd'), 'utf8')).to.equal('hello v2\n');
  });

  it('a helper failing during rotation: the refresh fails, no file is rewritten, the next good round catches up', async () => {
    const target = stack.targetPath('app');
    const data = await readlink(join(target, '..data'));
    const versionsJson = await readFile(join(target, '.metadata/versions.json'));
    await writeFile(join(store, 'db-password'), 'battery staple');
    await writeFile(join(store, 'db-password.version'), '3\n');
    // api-key's version file gone: its helper exits 1 (cat fails) on every call.
    await writeFile(join(store, 'api-key.version.bak'), await readFile(join(store, 'api-key.version')));
    await writeFile(join(store, 'api-key.version'), '');
    const since = Date.now();
    await whenDriverLogs(stack, 'a failed refresh of the app volume', () => refreshFailed(target, since));
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse');
    expect(await readFile(join(target, '.metadata/versions.json'))).to.deep.equal(versionsJson);
    await writeFile(join(store, 'api-key.version'), '1\n');
    await whenDriverLogs(
      stack,
      'db-password at version 3',
      async () => (await versionOf(target, 'db-password')) === '3',
    );
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('battery staple');
    await stack.client.unpublish('vol-app', target);
  });
});
