// The end-to-end tests' only container image, made without a registry: Debian's static
// busybox in an OCI image built with umoci, cached by the busybox-static package version
// under the peers cache, imported into containerd's CRI namespace. It is both the test
// image and the sandbox (pause) image, so its default command sleeps forever.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, symlink, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { peersCacheDir } from './peers.js';

const run = promisify(execFile);

/** The image reference pods use (imagePullPolicy: Never) and containerd's sandbox_image. */
export const E2E_IMAGE = 'docker.io/library/ssc-e2e-busybox:latest';

/** Where Debian's busybox-static installs its binary. */
const BUSYBOX = '/bin/busybox';

/** The installed busybox-static package version, or undefined when the package is absent. */
export async function busyboxStaticVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await run('dpkg-query', ['-W', '-f=${Version}', 'busybox-static']);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The image as an OCI layout tarball, built once per busybox-static version into
 * `<peers cache>/e2e-busybox-image-<version>/image.tar`: one layer with /bin/busybox and a
 * symlink per applet, PATH=/bin, command `sleep 2147483647` (the sandbox's pause).
 */
export async function busyboxImageTar(): Promise<string> {
  const version = await busyboxStaticVersion();
  if (!version || !existsSync(BUSYBOX))
    throw new Error('busybox-static is not installed (apt-get install busybox-static)');
  const dir = join(peersCacheDir(), `e2e-busybox-image-${version.replace(/[^A-Za-z0-9.+-]/g, '_')}`);
  const tar = join(dir, 'image.tar');
  if (existsSync(tar)) return tar;
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(join(dir, '.build-'));
  try {
    const layout = join(work, 'oci');
    const bundle = join(work, 'bundle');
    await run('umoci', ['init', '--layout', layout]);
    await run('umoci', ['new', '--image', `${layout}:latest`]);
    await run('umoci', ['unpack', '--image', `${layout}:latest`, bundle]);
    const bin = join(bundle, 'rootfs', 'bin');
    await mkdir(bin, { recursive: true });
    await copyFile(BUSYBOX, join(bin, 'busybox'));
    const { stdout } = await run(BUSYBOX, ['--list']);
    for (const applet of stdout
      .split('\n')
      .map((s) => s.trim())
      .filter((s) => s && s !== 'busybox')) {
      await symlink('busybox', join(bin, applet));
    }
    await run('umoci', ['repack', '--image', `${layout}:latest`, bundle]);
    await run('umoci', [
      'config',
      '--image',
      `${layout}:latest`,
      '--config.env=PATH=/bin',
      '--config.cmd=/bin/sleep',
      '--config.cmd=2147483647',
    ]);
    await run('umoci', ['gc', '--layout', layout]);
    await run('tar', ['-C', layout, '-cf', join(work, 'image.tar'), ...(await readdir(layout))]);
    await rename(join(work, 'image.tar'), tar);
    return tar;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Imports the image into containerd's `k8s.io` namespace (the one its CRI plugin serves). */
export async function importImage(containerdSocket: string, tar: string): Promise<void> {
  await run('ctr', [
    '--address',
    containerdSocket,
    '--namespace',
    'k8s.io',
    'images',
    'import',
    '--base-name',
    E2E_IMAGE.replace(/:latest$/, ''),
    tar,
  ]);
}
