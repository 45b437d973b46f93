import { chmodSync, chownSync, lchownSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Pacer } from '../../lib/pacer.js';

// fsGroup ownership (upstream issue #858). The driver advertises
// VOLUME_MOUNT_GROUP, so kubelet passes the pod's fsGroup as volume_mount_group and never
// changes the volume's ownership itself; the driver writes the volume for that group the
// way kubelet's SetVolumeOwnership (pkg/volume/volume_linux.go) treats a read-only volume.

/** Highest fsGroup Kubernetes accepts (a non-negative int32), and so the highest volume_mount_group. */
export const MAX_MOUNT_GROUP = 0x7fffffff;

/** What a read-only volume's files gain for the group: owner and group read (kubelet's roMask). */
const FILE_GROUP_BITS = 0o440;
/** What its directories gain: read and search for owner and group (roMask | execMask), and setgid. */
const DIR_GROUP_BITS = 0o2550;

/**
 * The mode of a file written for mount group `gid`: the provider's mode with owner and
 * group read added (0400 → 0440, 0600 → 0640, 0644 stays 0644), never a bit removed and
 * never one added for others. Without a mount group, the provider's mode as it is.
 */
export function fileModeFor(mode: number, gid: number | undefined): number {
  return gid === undefined ? mode : mode | FILE_GROUP_BITS;
}

/**
 * The mode of a directory written for mount group `gid` (payload directories, their
 * subdirectories, the volume root): read, search and setgid added (0755 → 02755,
 * 0750 → 02750), as kubelet does; without a mount group, `mode` as it is.
 */
export function dirModeFor(mode: number, gid: number | undefined): number {
  return gid === undefined ? mode : mode | DIR_GROUP_BITS;
}

/**
 * Gives an existing directory to group `gid` with the group rule's mode. chown comes
 * first: it may clear setgid, which the chmod then sets. Only what differs is changed,
 * so a volume already written for the group costs one lstat.
 */
export function ownDirectory(path: string, gid: number): void {
  const s = lstatSync(path);
  if (s.gid !== gid) chownSync(path, -1, gid);
  const mode = dirModeFor(s.mode & 0o7777, gid);
  if (s.gid !== gid || (s.mode & 0o7777) !== mode) chmodSync(path, mode);
}

/** Gives a symlink to group `gid` (lchown, as kubelet does; a link's own mode means nothing on Linux). */
export function ownLink(path: string, gid: number): void {
  lchownSync(path, -1, gid);
}

/**
 * Gives the target directory and its top-level links to mount group `gid`, right before
 * the swap: links kept from an earlier write for another group change with the payload.
 */
export async function ownTopLevel(
  targetDir: string,
  links: readonly string[],
  gid: number,
  pacer: Pacer,
): Promise<void> {
  ownDirectory(targetDir, gid);
  for (const name of links) {
    ownLink(join(targetDir, name), gid);
    if (pacer.due()) await pacer.pause();
  }
}
