import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countLogged, startCli, startProcess, type Child } from '../../bin/child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from '../../bin/csi-client.js';
import { NODE_FLAGS } from '../../lib/node-flags.js';
import { CAN_MOUNT, fileClass, mountsUnder, unmountAllUnder } from '../support/driver-stack.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FALLBACK_LOG = /"message":"mounting tmpfs with the mount program: the mount addon is not available"/;

/** Runs a program to its end: exit code and output (never rejects on a non-zero exit). */
function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(file, args, options, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    }),
  );
}

function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((d) => d !== '' && existsSync(join(d, command)));
}

// `npm ci` ran node-gyp for the root binding.gyp and failed without a
// toolchain, although the addon is optional. The build step must never fail for it.
describe('the mount addon is optional: building without a C toolchain', function () {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ssc-native-'));
    for (const p of ['binding.gyp', 'native', 'scripts/build-native.mjs'])
      await cp(join(REPO, p), join(dir, p), { recursive: true });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('package.json keeps npm from running node-gyp at install (gypfile: false)', async () => {
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
      gypfile?: unknown;
      scripts?: Record<string, string>;
    };
    expect(pkg.gypfile).to.equal(false);
    expect(pkg.scripts?.['install'] ?? pkg.scripts?.['preinstall']).to.equal(undefined);
  });

  const cases: { name: string; env: (bin: string) => NodeJS.ProcessEnv; message: RegExp; needsMake?: boolean }[] = [
    {
      name: 'a PATH without make and cc',
      env: (bin) => ({ PATH: bin }),
      message:
        /^build-native: skipped the optional native addons \(make and cc not found\); the driver will use the mount program, and the exec provider can't stop a helper's descendants that leave its process group\n$/,
    },
    {
      name: 'CC naming a missing program',
      env: () => ({ PATH: process.env['PATH'], CC: '/nonexistent/cc' }),
      message:
        /^build-native: skipped the optional native addons \(\/nonexistent\/cc not found\); the driver will use the mount program, and the exec provider can't stop a helper's descendants that leave its process group\n$/,
    },
    {
      name: 'a compiler that fails (CC=false: node-gyp runs and fails)',
      env: () => ({ PATH: process.env['PATH'], CC: 'false' }),
      needsMake: true,
      message:
        /^build-native: could not build the optional native addons \(.*make.*\); the driver will use the mount program, and the exec provider can't stop a helper's descendants that leave its process group\n$/,
    },
  ];
  for (const c of cases) {
    it(`exits 0 and says the driver will use the mount program, with ${c.name}`, async function () {
      if (c.needsMake && !onPath('make')) this.skip();
      // The stripped PATH still has python3 (node-gyp's gyp), never make or a compiler.
      const bin = join(dir, 'bin');
      await mkdir(bin);
      const python = (process.env['PATH'] ?? '')
        .split(delimiter)
        .map((d) => join(d, 'python3'))
        .find((p) => existsSync(p));
      if (python) await symlink(python, join(bin, 'python3'));
      const r = await run(process.execPath, [join(dir, 'scripts/build-native.mjs')], { cwd: dir, env: c.env(bin) });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(c.message);
      expect(existsSync(join(dir, 'build/Release/mount_syscalls.node'))).to.equal(false);
      expect(existsSync(join(dir, 'build/Release/process_reaper.node'))).to.equal(false);
    });
  }
});

describe('the mount addon is optional: a driver without it', function () {
  let root: string;
  let work: string;
  const children: Child[] = [];

  before(async function () {
    if (!CAN_MOUNT) this.skip(); // tmpfs mode needs root; without the addon it is the mount program's job
    // A copy of the built project without build/: what `npm ci && npm run build` leaves on a machine with no toolchain.
    root = await mkdtemp(join(tmpdir(), 'ssc-noaddon-'));
    for (const p of ['dist', 'proto', 'package.json']) await cp(join(REPO, p), join(root, p), { recursive: true });
    await symlink(await realpath(join(REPO, 'node_modules')), join(root, 'node_modules'));
    work = await mkdtemp(join(tmpdir(), 'ssc-noaddon-work-'));
    await mkdir(join(work, 'spc'));
    await writeFile(join(work, 'spc', 'app.yaml'), fileClass('app', [{ objectName: 'token', sourcePath: 'token' }]));
    await mkdir(join(work, 'root'));
    await writeFile(join(work, 'root', 'token'), 'tok-1');
    children.push(
      await startCli(
        ['provider', 'file', `--endpoint=unix://${join(work, 'providers/file.sock')}`, `--root=${join(work, 'root')}`],
        /provider started/,
      ),
    );
  });
  after(async () => {
    for (const c of children.reverse()) await c.stop();
    if (work) {
      await unmountAllUnder(work);
      await rm(work, { recursive: true, force: true });
    }
    if (root) await rm(root, { recursive: true, force: true });
  });

  function startDriver(name: string): Promise<Child> {
    return startProcess(
      process.execPath,
      [
        ...NODE_FLAGS,
        join(root, 'dist/bin/cli.js'),
        'driver',
        `--endpoint=unix://${join(work, `${name}.sock`)}`,
        '--nodeid=n',
        `--provider-volume=${join(work, 'providers')}`,
        '--additional-provider-volume-paths=',
        `--spc-dir=${join(work, 'spc')}`,
        '--metrics-addr=',
      ],
      /driver started/,
    );
  }

  it('starts, says once that it mounts with the mount program, and publishes a tmpfs volume', async () => {
    const driver = await startDriver('missing');
    children.push(driver);
    expect(countLogged(driver, FALLBACK_LOG)).to.equal(1);
    expect(driver.stderr()).to.match(
      /"reason":"not built \(npm run build builds it when make and a C compiler are installed\)"/,
    );
    expect(driver.stderr()).to.match(/"message":"driver started".*"mounts":"mount-program"/);
    const client = new CsiClient(join(work, 'missing.sock'));
    const target = join(work, 'vol');
    try {
      await client.publish(
        inlinePublishRequest(
          'v1',
          target,
          inlineVolumeContext({ name: 'p', namespace: 'default', uid: 'u1', serviceAccountName: 'default' }, 'app'),
        ),
      );
      expect(await readFile(join(target, 'token'), 'utf8')).to.equal('tok-1');
      expect(await mountsUnder(target)).to.deep.equal([target]);
      await client.unpublish('v1', target);
      expect(await mountsUnder(target)).to.deep.equal([]);
    } finally {
      client.close();
    }
    expect(countLogged(driver, FALLBACK_LOG)).to.equal(1);
  });

  it('starts with the mount program when the addon file cannot be loaded (another Node.js ABI, a damaged file)', async () => {
    await mkdir(join(root, 'build/Release'), { recursive: true });
    await writeFile(join(root, 'build/Release/mount_syscalls.node'), 'not a shared object');
    const driver = await startDriver('damaged');
    children.push(driver);
    expect(countLogged(driver, FALLBACK_LOG)).to.equal(1);
    expect(driver.stderr()).to.match(/"reason":"cannot be loaded: [^"]+"/);
    expect(driver.stderr()).to.match(/"message":"driver started".*"mounts":"mount-program"/);
  });
});

describe('the process-reaper addon is optional: an exec provider without it', function () {
  let root: string;
  let work: string;
  let provider: Child | undefined;
  const WARNING =
    /"message":"exec: a helper's descendants that leave its process group \(setsid\) can outlive it: the process-reaper addon is not built[^"]*"/;

  before(async () => {
    // A copy of the built project without build/: what `npm ci && npm run build` leaves on a machine with no toolchain.
    root = await mkdtemp(join(tmpdir(), 'ssc-noreaper-'));
    for (const p of ['dist', 'proto', 'package.json']) await cp(join(REPO, p), join(root, p), { recursive: true });
    await symlink(await realpath(join(REPO, 'node_modules')), join(root, 'node_modules'));
    work = await mkdtemp(join(tmpdir(), 'ssc-noreaper-work-'));
    await mkdir(join(work, 'helpers'));
  });
  after(async () => {
    await provider?.stop();
    if (work) await rm(work, { recursive: true, force: true });
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("starts and warns once that a helper's descendants leaving its process group can outlive it, and why", async function () {
    if (process.pid === 1) this.skip(); // PID 1 adopts orphans anyway: no warning there
    provider = await startProcess(
      process.execPath,
      [
        ...NODE_FLAGS,
        join(root, 'dist/bin/cli.js'),
        'provider',
        'exec',
        `--endpoint=unix://${join(work, 'exec.sock')}`,
        `--helpers-dir=${join(work, 'helpers')}`,
        `--hmac-key-file=${join(work, 'hmac.key')}`,
      ],
      /provider started/,
    );
    expect(countLogged(provider, WARNING)).to.equal(1);
  });
});
