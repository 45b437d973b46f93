import { readFileSync } from 'node:fs';

/** CAP_SYS_ADMIN's bit in the capability masks of /proc/<pid>/status (linux/capability.h). */
const CAP_SYS_ADMIN = 21n;

/**
 * The effective capability mask (`CapEff:`, hex) of /proc/self/status text, or undefined
 * when the line is missing (not Linux, or an unusual /proc).
 */
export function effectiveCapabilities(statusText: string): bigint | undefined {
  const hex = /^CapEff:\s*([0-9a-fA-F]+)\s*$/m.exec(statusText)?.[1];
  return hex === undefined ? undefined : BigInt(`0x${hex}`);
}

/** What the mount-rights decision looks at; all read once at start. */
export interface MountRightsFacts {
  readonly mountMode: 'tmpfs' | 'dir';
  readonly kubernetesMode: boolean;
  /** undefined: unknown, the check is skipped rather than guessed. */
  readonly capEff: bigint | undefined;
  readonly uid: number | undefined;
}

/**
 * The startup error for a driver that must mount tmpfs and may not, else undefined.
 * Without CAP_SYS_ADMIN every NodePublishVolume would fail EPERM while the driver looks
 * healthy, so both modes refuse to start: Kubernetes mode always needs
 * to mount; local mode is told about --mount-mode=dir.
 */
export function mountRightsProblem(facts: MountRightsFacts): string | undefined {
  if (facts.mountMode !== 'tmpfs' || facts.capEff === undefined) return undefined;
  if ((facts.capEff >> CAP_SYS_ADMIN) & 1n) return undefined;
  const who = `the driver runs as uid ${facts.uid ?? '?'} without CAP_SYS_ADMIN`;
  return facts.kubernetesMode
    ? `cannot mount tmpfs volumes: ${who}; run it as root in a privileged container, as deploy/driver-daemonset.yaml does`
    : `cannot mount tmpfs volumes: ${who}; run it as root, or add --mount-mode=dir (local mode: volumes become plain directories on disk)`;
}

/** Reads this process's capabilities and throws mountRightsProblem's message, if any. */
export function assertMountRights(
  config: { readonly mountMode: 'tmpfs' | 'dir'; readonly spcDir: string },
  readStatus = (): string => readFileSync('/proc/self/status', 'utf8'),
): void {
  if (config.mountMode !== 'tmpfs') return;
  let capEff: bigint | undefined;
  try {
    capEff = effectiveCapabilities(readStatus());
  } catch {
    capEff = undefined; // no /proc: nothing to decide from; a failed mount still names EPERM
  }
  const problem = mountRightsProblem({
    mountMode: config.mountMode,
    kubernetesMode: config.spcDir === '',
    capEff,
    uid: process.getuid?.(),
  });
  if (problem) throw new Error(problem);
}
