import { expect } from 'chai';
import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { container, EXEC_PROVIDER_DS, find, type Obj } from '../support/deploy-manifests.js';
import { execProviderArgs } from '../support/exec-provider-daemonset.js';
import { startProviderProcess, type ProviderProcess } from '../support/provider-process.js';
import { stringFlag } from '../../lib/flags.js';

// deploy/provider-exec-daemonset.yaml's helpers volume as kubelet writes it, served by the
// real exec provider process with the DaemonSet's flags: deploy/examples/exec's ConfigMaps
// projected into a timestamped directory, `..data` pointing at it and one symlink per
// top-level entry (kubelet's atomic writer), --helpers-dir at `..data` as the DaemonSet
// passes it. The example class mounts file-get.sh's greeting; a ConfigMap change (a new
// timestamped directory, `..data` swapped, the old one removed) reaches the next Mount;
// --helpers-dir at the mount itself is refused, which is why the DaemonSet names `..data`.

const POD = {
  'csi.storage.k8s.io/pod.namespace': 'default',
  'csi.storage.k8s.io/pod.name': 'exec-demo',
  'csi.storage.k8s.io/serviceAccount.name': 'default',
};

/** The files of the DaemonSet's projected helpers volume: path → [contents, mode]. */
function projectedFiles(
  helpersData: Record<string, string>,
  filesData: Record<string, string>,
): Map<string, [string, number]> {
  const ds = EXEC_PROVIDER_DS();
  const volume = (ds['spec'].template.spec.volumes as Obj[]).find((v) => v['name'] === 'helpers')?.['projected'] as Obj;
  const files = new Map<string, [string, number]>();
  for (const [key, text] of Object.entries(helpersData)) files.set(key, [text, volume['defaultMode'] as number]);
  for (const item of (volume['sources'][1].configMap.items ?? []) as Obj[]) {
    const text = filesData[item['key']];
    if (text !== undefined) files.set(item['path'], [text, (item['mode'] ?? volume['defaultMode']) as number]);
  }
  return files;
}

/** Writes `files` as kubelet's atomic writer does: a new timestamped directory, then `..data` swapped to it, the old one removed. */
async function writeAtomically(
  volume: string,
  files: Map<string, [string, number]>,
  generation: number,
): Promise<void> {
  const dir = `..2026_11_24_05_00_0${generation}.000000001`;
  for (const [path, [text, mode]] of files) {
    const file = join(volume, dir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
    await chmod(file, mode);
  }
  await symlink(dir, join(volume, '..data_tmp'));
  await rename(join(volume, '..data_tmp'), join(volume, '..data'));
  for (const top of new Set([...files.keys()].map((p) => p.split('/')[0] as string))) {
    await symlink(posix.join('..data', top), join(volume, top)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  }
  if (generation > 1) await rm(join(volume, `..2026_11_24_05_00_0${generation - 1}.000000001`), { recursive: true });
}

describe('deploy/provider-exec-daemonset.yaml: the helpers ConfigMap volume as kubelet writes it, under the real exec provider', function () {
  this.timeout(60_000);
  const helpers = find('ConfigMap', 'csi-secrets-store-provider-exec-helpers').obj['data'] as Record<string, string>;
  const helperFiles = find('ConfigMap', 'csi-secrets-store-provider-exec-helper-files').obj['data'] as Record<
    string,
    string
  >;
  const spc = parseSecretProviderClass(find('SecretProviderClass', 'exec-demo').obj);
  let provider: ProviderProcess | undefined;
  let volume: string;

  /** The DaemonSet's exec flags, its container paths mapped to `volume` and the provider's temp dir. */
  function daemonSetArgs(work: string, helpersDir?: string): string[] {
    const ds = EXEC_PROVIDER_DS();
    const flags = execProviderArgs(ds);
    const mountPath = (container(ds, 'provider')['volumeMounts'] as Obj[]).find((m) => m['name'] === 'helpers')?.[
      'mountPath'
    ] as string;
    const dir = stringFlag(flags, 'helpers-dir');
    expect(dir.startsWith(`${mountPath}/`) || dir === mountPath).to.equal(true);
    return [
      `--helpers-dir=${helpersDir ?? join(volume, posix.relative(mountPath, dir))}`,
      `--hmac-key-file=${join(work, 'hmac.key')}`,
      ...['helper-timeout', 'max-output-bytes', 'max-concurrent-helpers'].map((f) => `--${f}=${stringFlag(flags, f)}`),
    ];
  }

  afterEach(async () => {
    await provider?.stop();
    provider = undefined;
  });

  it("mounts the example class's greeting from file-get.sh, and a ConfigMap change reaches the next Mount", async () => {
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      {
        extraArgs: (work) => {
          volume = join(work, 'helpers-volume');
          return daemonSetArgs(work);
        },
      },
    );
    await mkdir(volume, { recursive: true });
    await writeAtomically(volume, projectedFiles(helpers, helperFiles), 1);
    const attributes = { ...spc.parameters, ...POD };

    const first = await provider.mount(attributes);
    const greeting = first.files.find((f) => f.path === 'greeting.txt');
    expect(greeting?.contents.toString()).to.equal(helperFiles['file-get.d_greeting.txt']);
    expect(greeting?.mode).to.equal(0o440);
    const version = first.object_version.find((v) => v.id === 'greeting.txt')?.version;
    expect(version).to.be.a('string');

    await writeAtomically(
      volume,
      projectedFiles(helpers, { ...helperFiles, 'file-get.d_greeting.txt': 'a new greeting\n' }),
      2,
    );
    const second = await provider.mount(attributes, { current: { 'greeting.txt': version as string } });
    expect(second.files.find((f) => f.path === 'greeting.txt')?.contents.toString()).to.equal('a new greeting\n');
    expect(second.object_version.find((v) => v.id === 'greeting.txt')?.version).to.not.equal(version);
  });

  it('refuses the helpers when --helpers-dir is the volume itself: its entries are symlinks into a subdirectory', async () => {
    provider = await startProviderProcess(
      'exec',
      [],
      {},
      {
        extraArgs: (work) => {
          volume = join(work, 'helpers-volume');
          return daemonSetArgs(work, volume);
        },
      },
    );
    await mkdir(volume, { recursive: true });
    await writeAtomically(volume, projectedFiles(helpers, helperFiles), 1);
    const failure = await provider.mountError({ ...spc.parameters, ...POD });
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details).to.include('resolves outside --helpers-dir');
  });
});
