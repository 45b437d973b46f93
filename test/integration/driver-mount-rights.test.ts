import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmod, chown, copyFile, link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnCli, type CliRun } from '../support/cli-run.js';
import { fileClass } from '../support/driver-stack.js';

const NOBODY = 65534;
/** A path to this node binary that `nobody` can reach (CI's pinned node lives under /root, mode 0700). */
let nodeForNobody = process.execPath;
/** The CLI in a copy of the program that `nobody` can reach: the checkout may lie under /root too. */
let cliForNobody: string | undefined;

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** What the driver needs at run time, as the image has it (Dockerfile.driver). */
const RUNTIME_PARTS = ['package.json', 'dist', 'proto', 'build', 'node_modules'];

/**
 * Copies the program's run-time parts into `dir` as hard links (a plain copy across file
 * systems), its folders 0755; a file `nobody` could not read is replaced, in the copy only,
 * by a readable copy of its own (the checkout's files keep their modes).
 */
async function reachableCopy(dir: string): Promise<void> {
  const run = promisify(execFile);
  await mkdir(dir);
  for (const part of RUNTIME_PARTS) {
    const from = join(REPO, part);
    await run('cp', ['-Rl', from, dir]).catch(() => run('cp', ['-R', from, dir]));
  }
  await run('find', [dir, '-type', 'd', '-exec', 'chmod', '755', '{}', '+']);
  await run('find', [
    dir,
    '-type',
    'f',
    '!',
    '-perm',
    '-o=r',
    '-exec',
    'sh',
    '-c',
    'for f do cp "$f" "$f.copy" && mv -f "$f.copy" "$f" && chmod a+r "$f"; done',
    'sh',
    '{}',
    '+',
  ]);
}

/** Starts the driver as `nobody` and resolves with its exit code, or 'started' (then stops it). */
async function driverAsNobody(
  args: readonly string[],
  cwd: string,
): Promise<{ outcome: number | string; run: CliRun }> {
  const run = spawnCli(['driver', '--nodeid=n', '--metrics-addr=', ...args], {
    uid: NOBODY,
    gid: NOBODY,
    cwd,
    node: nodeForNobody,
    ...(cliForNobody ? { cli: cliForNobody } : {}),
  });
  const started = run.until('stderr', /"message":"driver started"/).then(
    () => 'started',
    () => 'exited',
  );
  const outcome = await Promise.race([run.exited, started]);
  if (outcome === 'started') {
    run.process.kill('SIGTERM');
    await run.exited;
  }
  return { outcome, run };
}

// as non-root without --mount-mode=dir the driver started silently and
// every publish failed EPERM. It must refuse to start, before it reads a kubeconfig.
describe('driver without mount rights (run as uid 65534)', function () {
  let work: string;
  before(async function () {
    if (process.getuid?.() !== 0) this.skip(); // only root can start a process as another uid
    work = await mkdtemp(join(tmpdir(), 'ssc-nobody-'));
    await chmod(work, 0o755); // mkdtemp's 0700 would stop nobody at the door
    await mkdir(join(work, 'spc'));
    await writeFile(join(work, 'spc', 'app.yaml'), fileClass('app', [{ objectName: 'a' }]));
    await mkdir(join(work, 'run'));
    await chown(join(work, 'run'), NOBODY, NOBODY);
    nodeForNobody = join(work, 'node');
    await link(process.execPath, nodeForNobody).catch(() => copyFile(process.execPath, nodeForNobody));
    await chmod(nodeForNobody, 0o755);
    await reachableCopy(join(work, 'app'));
    cliForNobody = join(work, 'app', 'dist', 'bin', 'cli.js');
  });
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('Kubernetes mode exits 1 at once, saying it needs root in a privileged container (no kubeconfig read)', async () => {
    const { outcome, run } = await driverAsNobody(
      [`--endpoint=unix://${join(work, 'run/k.sock')}`, `--kubeconfig=${join(work, 'no-such-kubeconfig')}`],
      work,
    );
    expect(outcome, run.stderr()).to.equal(1);
    expect(run.stderr()).to.equal(
      `secrets-store-csi: cannot mount tmpfs volumes: the driver runs as uid ${NOBODY} without CAP_SYS_ADMIN; run it as root in a privileged container, as deploy/driver-daemonset.yaml does\n`,
    );
  });

  it('local mode exits 1 at once, pointing at --mount-mode=dir', async () => {
    const { outcome, run } = await driverAsNobody(
      [
        `--endpoint=unix://${join(work, 'run/l.sock')}`,
        `--spc-dir=${join(work, 'spc')}`,
        `--provider-volume=${join(work, 'run')}`,
        '--additional-provider-volume-paths=',
      ],
      work,
    );
    expect(outcome, run.stderr()).to.equal(1);
    expect(run.stderr()).to.equal(
      `secrets-store-csi: cannot mount tmpfs volumes: the driver runs as uid ${NOBODY} without CAP_SYS_ADMIN; run it as root, or add --mount-mode=dir (local mode: volumes become plain directories on disk)\n`,
    );
  });

  it('local mode with --mount-mode=dir starts as the same user', async () => {
    const { outcome, run } = await driverAsNobody(
      [
        `--endpoint=unix://${join(work, 'run/d.sock')}`,
        `--spc-dir=${join(work, 'spc')}`,
        `--provider-volume=${join(work, 'run')}`,
        '--additional-provider-volume-paths=',
        '--mount-mode=dir',
      ],
      work,
    );
    expect(outcome, run.stderr()).to.equal('started');
  });
});
