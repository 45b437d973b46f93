import { execFile } from 'node:child_process';
import { loadNativeAddon } from '../../lib/native-addon.js';

/**
 * Runs a program; on failure rejects with execFile's error carrying its `stderr`, as
 * util.promisify(execFile) does. Not util.promisify itself: on Node 24 an ESM import of
 * node:util loads worker_threads (startup modules).
 */
function execFileAsync(file: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(file, args, (err, _stdout, stderr) => (err ? reject(Object.assign(err, { stderr })) : resolve())),
  );
}

/** Mounts and unmounts tmpfs; implemented by the syscall addon or by the mount program. */
export interface MountSyscalls {
  /** "syscall" or "mount-program", for the startup log. */
  readonly kind: string;
  /** Mounts a tmpfs at `target`; `source` is the name mountinfo shows for it (default "tmpfs"). */
  mountTmpfs(target: string, options: string, source?: string): Promise<void>;
  unmount(target: string): Promise<void>;
}

/** mount(2) flags used for secret volumes (linux/fs.h). */
const MS_NOSUID = 0x2;
const MS_NODEV = 0x4;

interface Addon {
  mount(source: string, target: string, fstype: string, flags: number, data: string): void;
  /** umount2 on libuv's thread pool: the kernel may wait out an RCU grace period. */
  umountAsync(target: string, flags: number): Promise<void>;
}

/** Wraps a failed command so its stderr reaches the error message. */
function programError(err: unknown): Error {
  const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
  return Object.assign(new Error(stderr || (err as Error).message), { stderr });
}

/** The mount program (util-linux), one fork+exec per call. */
export const mountProgram: MountSyscalls = {
  kind: 'mount-program',
  async mountTmpfs(target, options, source = 'tmpfs') {
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', `${options},nosuid,nodev`, source, target]).catch(
      (err: unknown) => {
        throw programError(err);
      },
    );
  },
  async unmount(target) {
    await execFileAsync('umount', [target]).catch((err: unknown) => {
      throw programError(err);
    });
  },
};

/**
 * The fastest available implementation: the N-API addon (mount(2)/umount2(2), no fork)
 * when it was built and loads, otherwise the mount program. The addon is optional:
 * `onFallback` hears once why it is not used.
 */
export function loadMountSyscalls(
  onFallback: (reason: string, addon: string) => void = () => undefined,
): MountSyscalls {
  const loaded = loadNativeAddon<Addon>('mount_syscalls');
  if (!loaded.addon) {
    // Not built, or built for another Node.js version or architecture: still mount.
    onFallback(loaded.why, loaded.path);
    return mountProgram;
  }
  const addon = loaded.addon;
  return {
    kind: 'syscall',
    async mountTmpfs(target, options, source = 'tmpfs') {
      addon.mount(source, target, 'tmpfs', MS_NOSUID | MS_NODEV, options);
    },
    async unmount(target) {
      await addon.umountAsync(target, 0);
    },
  };
}
