import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_PATH, startCli, startProcess, untilLogged, type Child } from '../../bin/child-process.js';
import { ProviderClient } from '../../driver/provider-client/client.js';
import { realSleep } from '../../lib/sleep.js';
import { isGrpcCallError, SscError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logging/logger.js';

const OBJECTS = (entries: string) => JSON.stringify({ objects: entries });

/** Go's json.Marshal of a map[string]string: keys sorted, <, >, & and U+2028/9 escaped. */
function goJsonMap(map: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify(sorted).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

describe('file provider process (v1alpha1 server, health, signals)', function () {
  let work: string;
  let provider: Child;
  let client: ProviderClient;
  let healthPort: number;

  function mount(attributes: string, permission = '420', secrets = '{}') {
    return client.mount('file', {
      attributes,
      secrets,
      permission,
      target_path: '/var/lib/kubelet/pods/x/volumes/v',
      current_object_version: [],
    });
  }

  async function mountError(attributes: string, permission = '420'): Promise<SscError> {
    return mount(attributes, permission).then(
      () => {
        throw new Error('expected failure');
      },
      (e: SscError) => e,
    );
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-fp-'));
    await mkdir(join(work, 'root', 'db'), { recursive: true });
    await writeFile(join(work, 'root', 'db', 'password'), 's3cret');
    await writeFile(join(work, 'outside'), 'not yours');
    await symlink(join(work, 'outside'), join(work, 'root', 'escape'));
    execFileSync('mkfifo', [join(work, 'root', 'fifo')]);
    await mkdir(join(work, 'providers'));
    // A stale socket file left by a crashed provider: bound, never listening.
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      join(work, 'providers', 'file.sock'),
    ]);
    provider = await startCli(
      [
        'provider',
        'file',
        `--endpoint=unix://${join(work, 'providers', 'file.sock')}`,
        `--root=${join(work, 'root')}`,
        '--health-addr=127.0.0.1:0',
      ],
      /provider started/,
    );
    healthPort = Number(/"healthPort":(\d+)/.exec(provider.stderr())?.[1]);
    client = new ProviderClient({
      providerDirs: [join(work, 'providers')],
      maxCallRecvMsgSize: 4 << 20,
      timeoutMs: 10_000,
      sleep: realSleep,
      logger: createLogger({ component: 'test', silent: true }),
    });
  });
  after(async () => {
    client?.close();
    await provider?.stop();
    await rm(work, { recursive: true, force: true });
  });

  it('replaced a stale socket file and answers Version', async () => {
    expect(await client.version('file')).to.deep.equal({
      version: 'v1alpha1',
      runtime_name: 'secrets-store-csi-file',
      runtime_version: '0.1.0',
    });
  });

  it("runs with the images' node flags (no missingNodeFlags warning by the time it answered)", () => {
    // After the Version round trip: the warning would have been written right after "provider started".
    expect(provider.stderr()).to.match(/provider started/);
    expect(provider.stderr()).not.to.match(/missingNodeFlags/);
  });

  it('serves an object with the requested mode and an HMAC version', async () => {
    const res = await mount(OBJECTS('- objectName: pw\n  sourcePath: db/password\n  mode: "0600"\n'));
    expect(res.files.map((f) => [f.path, f.mode, Buffer.from(f.contents).toString()])).to.deep.equal([
      ['pw', 0o600, 's3cret'],
    ]);
    expect(res.object_version[0]?.id).to.equal('pw');
    expect(res.object_version[0]?.version).to.match(/^[0-9a-f]{64}$/);
  });

  it('uses the request permission when an object has no mode', async () => {
    const res = await mount(OBJECTS('- objectName: db/password\n'), '288');
    expect(res.files[0]?.mode).to.equal(0o440);
  });

  const refusals: [string, string, string, RegExp][] = [
    [
      'a source path with ..',
      '- objectName: x\n  sourcePath: ../outside\n',
      'permission-denied',
      /outside the provider root/,
    ],
    [
      'a symlink leading outside the root',
      '- objectName: x\n  sourcePath: escape\n',
      'permission-denied',
      /outside the provider root/,
    ],
    ['an absolute source path', '- objectName: x\n  sourcePath: /etc/passwd\n', 'invalid-argument', /must be relative/],
    ['a missing file', '- objectName: x\n  sourcePath: nope\n', 'not-found', /"x" \(sourcePath "nope"\) not found/],
    [
      'an objects list without objectName',
      '- sourcePath: db/password\n',
      'invalid-argument',
      /objects\[0\]\.objectName is required/,
    ],
    ['objects that are not YAML', '- [unclosed', 'invalid-argument', /not valid YAML/],
    [
      'a directory',
      '- objectName: x\n  sourcePath: db\n',
      'invalid-argument',
      /"x" \(sourcePath "db"\) cannot be read \(EISDIR\)/,
    ],
    // Reads are synchronous: opening a FIFO without O_NONBLOCK would hang the whole provider.
    [
      'a FIFO (and keeps serving)',
      '- objectName: x\n  sourcePath: fifo\n',
      'invalid-argument',
      /"x" \(sourcePath "fifo"\) is not a regular file/,
    ],
  ];
  for (const [name, objects, kind, message] of refusals) {
    it(`refuses ${name}`, async () => {
      const err = await mountError(OBJECTS(objects));
      expect(err.kind).to.equal(kind);
      expect(err.message).to.match(message);
      expect(err.message).not.to.include('not yours');
      if (name.includes('FIFO')) expect((await mount(OBJECTS('- objectName: db/password\n'))).files).to.have.length(1);
    });
  }

  it('rejects a malformed request naming the field, without echoing secrets', async () => {
    const bad = await mount('{"objects": 1}', '420', '{"password": "p@ss"}').then(
      () => undefined,
      (e: SscError) => e,
    );
    expect(bad?.message).to.include('attributes.objects must be a string');
    const perm = await mountError(OBJECTS('- objectName: db/password\n'), '"0644"');
    expect(perm.kind).to.equal('invalid-argument');
    expect(perm.message).to.include('permission must be a JSON number');
    expect(provider.stderr()).not.to.include('p@ss');
  });

  it('serves /healthz and /metrics with mount counts', async () => {
    const health = await fetch(`http://127.0.0.1:${healthPort}/healthz`);
    expect(health.status).to.equal(200);
    const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
    expect(metrics).to.match(/^provider_mount_total\{provider="file",result="success",error_type=""\} 3$/m);
    expect(metrics).to.match(/^provider_mount_total\{provider="file",result="error",error_type="OutsideRoot"\} 2$/m);
    // The process's one registry: the default process and Node.js metrics on the same page.
    expect(metrics).to.match(/^process_resident_memory_bytes \d+$/m);
    expect(metrics).to.match(/^nodejs_eventloop_lag_p50_seconds /m);
  });

  it('serves the MountRequest the Go driver v1.6.1 sends for a pod without nodePublishSecretRef', async () => {
    // nodeserver.go: parameters = spec.parameters overlaid with kubelet's volume context,
    // secrets = json.Marshal(nil map) = "null", permission = json.Marshal(0644) = "420",
    // no current_object_version.
    const attributes = goJsonMap({
      objects: '- objectName: db/password\n  mode: "0440"\n# a&b <c>\n',
      secretProviderClass: 'app-secrets',
      'csi.storage.k8s.io/pod.name': 'web-0',
      'csi.storage.k8s.io/pod.namespace': 'default',
      'csi.storage.k8s.io/pod.uid': '6f1c2a9e-0d7b-4c1e-9a55-3b2f0c8d7e11',
      'csi.storage.k8s.io/serviceAccount.name': 'default',
      'csi.storage.k8s.io/ephemeral': 'true',
    });
    expect(attributes).to.include('\\u0026').and.to.include('\\u003c');
    const res = await client.mount('file', {
      attributes,
      secrets: 'null',
      permission: '420',
      current_object_version: [],
      target_path:
        '/var/lib/kubelet/pods/6f1c2a9e-0d7b-4c1e-9a55-3b2f0c8d7e11/volumes/kubernetes.io~csi/secrets-store/mount',
    });
    expect(res.error?.code ?? '').to.equal('');
    expect(res.files.map((f) => [f.path, f.mode, Buffer.from(f.contents).toString()])).to.deep.equal([
      ['db/password', 0o440, 's3cret'],
    ]);
    expect(res.object_version.map((v) => v.id)).to.deep.equal(['db/password']);
  });

  it('refuses to start when the endpoint is a regular file, naming it', () => {
    const path = join(work, 'not-a-socket');
    execFileSync('touch', [path]);
    const res = spawnSync(
      process.execPath,
      [CLI_PATH, 'provider', 'file', `--endpoint=unix://${path}`, `--root=${work}`],
      { encoding: 'utf8' },
    );
    expect(res.status).to.equal(1);
    expect(res.stderr).to.include(`${path} exists and is not a socket`);
  });

  it('refuses to start with an empty --root (it would name /), naming the flag', () => {
    const res = spawnSync(
      process.execPath,
      [CLI_PATH, 'provider', 'file', `--endpoint=unix://${join(work, 'empty-root.sock')}`, '--root='],
      { encoding: 'utf8' },
    );
    expect(res.status).to.equal(1);
    expect(res.stderr).to.include('--root must name the directory the objects are read from');
  });

  it('started without the node flags, warns and serves as before', async () => {
    await mkdir(join(work, 'plain'));
    const plain = await startProcess(
      process.execPath,
      [
        CLI_PATH,
        'provider',
        'file',
        `--endpoint=unix://${join(work, 'plain', 'file.sock')}`,
        `--root=${join(work, 'root')}`,
      ],
      /provider started/,
    );
    try {
      await untilLogged(plain, /missingNodeFlags/);
      expect(plain.stderr()).to.match(/"missingNodeFlags":\["--max-semi-space-size=4","--heap-growing-percent=20"\]/);
      const plainClient = new ProviderClient({
        providerDirs: [join(work, 'plain')],
        maxCallRecvMsgSize: 4 << 20,
        timeoutMs: 10_000,
        sleep: realSleep,
        logger: createLogger({ component: 'test', silent: true }),
      });
      try {
        expect((await plainClient.version('file')).version).to.equal('v1alpha1');
      } finally {
        plainClient.close();
      }
    } finally {
      expect(await plain.stop()).to.equal(0);
    }
  });

  it('stops gracefully on SIGTERM with exit code 0', async () => {
    expect(await provider.stop()).to.equal(0);
    const err = await client.version('file').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err instanceof SscError ? err.kind : isGrpcCallError(err) ? grpc.status[err.code] : err).to.equal(
      'unavailable',
    );
    await lstat(join(work, 'providers', 'file.sock')).catch(() => undefined);
  });
});
