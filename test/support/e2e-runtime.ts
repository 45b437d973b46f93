// containerd and kubelet for the end-to-end tests, each with its own config, root, state
// and sockets under the node's temp dir, started detached (a Ctrl-C of the test run must
// not kill them before test/e2e/cleanup-node.sh tears them down in order). kubelet still
// writes a few fixed host paths (/var/lib/kubelet/device-plugins/kubelet.sock,
// /var/log/containers, /run/containerd/s), so only one node runs per machine at a time.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { E2E_IMAGE } from './e2e-image.js';

/** The sysctls kubelet sets at start (protectKernelDefaults: false); saved and restored by the harness. */
export const KUBELET_SYSCTLS = ['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops'] as const;

/** containerd's gRPC socket for a node dir. */
export function containerdSocket(dir: string): string {
  return join(dir, 'containerd', 'containerd.sock');
}

/** containerd 1.6's config (version 2): CRI with cgroupfs, our image as sandbox, no CNI (hostNetwork pods only). */
export function containerdConfig(dir: string): string {
  const base = join(dir, 'containerd');
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    'version = 2',
    `root = ${JSON.stringify(join(base, 'root'))}`,
    `state = ${JSON.stringify(join(base, 'state'))}`,
    // opt writes to /opt/containerd; the other snapshotters are not used here.
    'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]',
    '[grpc]',
    `  address = ${JSON.stringify(containerdSocket(dir))}`,
    '[ttrpc]',
    `  address = ${JSON.stringify(`${containerdSocket(dir)}.ttrpc`)}`,
    '[debug]',
    '  address = ""',
    '[metrics]',
    '  address = ""',
    `[${cri}]`,
    `  sandbox_image = ${JSON.stringify(E2E_IMAGE)}`,
    // root here lacks CAP_SYS_RESOURCE: without this every sandbox fails in runc create.
    '  restrict_oom_score_adj = true',
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    `[${cri}.containerd]`,
    '  snapshotter = "overlayfs"',
    '  default_runtime_name = "runc"',
    `[${cri}.containerd.runtimes.runc]`,
    '  runtime_type = "io.containerd.runc.v2"',
    `[${cri}.containerd.runtimes.runc.options]`,
    '  SystemdCgroup = false',
    `[${cri}.cni]`,
    `  bin_dir = ${JSON.stringify(join(base, 'cni-bin'))}`,
    `  conf_dir = ${JSON.stringify(join(base, 'cni-conf'))}`,
    '',
  ].join('\n');
}

/** Paths and names kubelet's config needs. */
export interface KubeletLayout {
  readonly dir: string;
  readonly rootDir: string;
  readonly podLogsDir: string;
  /** The cgroup (v1, every hierarchy) kubelet puts kubepods under; created by the harness. */
  readonly cgroupRoot: string;
  readonly port: number;
}

/**
 * kubelet's KubeletConfiguration: cgroup v1 allowed, cgroupfs, everything under the node
 * dir, loopback serving with anonymous access and AlwaysAllow (a throwaway test node no
 * one else reaches), no image GC or disk eviction (the only image is imported, not pulled).
 */
export function kubeletConfig(layout: KubeletLayout, containerdSock: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: layout.cgroupRoot,
      cgroupsPerQOS: true,
      containerRuntimeEndpoint: `unix://${containerdSock}`,
      podLogsDir: layout.podLogsDir,
      volumePluginDir: join(layout.dir, 'volume-plugins'),
      address: '127.0.0.1',
      port: layout.port,
      readOnlyPort: 0,
      healthzPort: 0,
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      failSwapOn: false,
      resolvConf: '',
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: {
        'memory.available': '1Mi',
        'nodefs.available': '0%',
        'imagefs.available': '0%',
        'nodefs.inodesFree': '0%',
      },
      makeIPTablesUtilChains: false,
      syncFrequency: '10s',
    },
    null,
    2,
  );
}

/** A TCP port free on loopback a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `command` detached with output to `log`, recording its pid in `pidFile` (for cleanup-node.sh). */
export async function spawnDetached(
  command: string,
  args: readonly string[],
  log: string,
  pidFile: string,
): Promise<number> {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid ?? 0));
      child.once('error', reject);
    });
    child.unref();
    await writeFile(pidFile, String(pid));
    return pid;
  } finally {
    closeSync(fd);
  }
}

/** Whether process `pid` still runs (not a zombie). */
export async function running(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

/** The cgroup v1 hierarchies mounted under /sys/fs/cgroup that kubelet uses. */
export const KUBELET_CGROUP_CONTROLLERS = [
  'cpu',
  'cpuacct',
  'cpuset',
  'memory',
  'pids',
  'hugetlb',
  'blkio',
  'devices',
  'freezer',
  'systemd',
] as const;

/** Creates `cgroupRoot` in every mounted v1 hierarchy (kubelet requires it to exist). */
export async function createCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const c of KUBELET_CGROUP_CONTROLLERS) {
    await mkdir(join('/sys/fs/cgroup', c, cgroupRoot), { recursive: true }).catch(() => undefined);
  }
}

/** The current values of KUBELET_SYSCTLS as `key=value` lines. */
export async function readSysctls(): Promise<string> {
  const lines: string[] = [];
  for (const key of KUBELET_SYSCTLS)
    lines.push(`${key}=${(await readFile(`/proc/sys/${key.replace(/\./g, '/')}`, 'utf8')).trim()}`);
  return `${lines.join('\n')}\n`;
}
