import { lstatSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toSscError } from '../../proto/runtime/errors.js';
import type { Logger } from '../../proto/runtime/logger.js';
import { Pacer } from '../../proto/runtime/pacer.js';
import { parseMountInfo } from './mountinfo.js';
import { DATA_DIR_LINK, isPayloadDirName, repairCounts, repaired, repairTarget } from './payload-repair.js';
import { VERSIONS_FILE } from './metadata.js';

/**
 * True when `mountPoint` holds a payload this driver wrote: `..data` or a payload
 * directory with `.metadata/versions.json` (checked on top of the mount's source name).
 */
export function isDriverVolume(mountPoint: string): boolean {
  let entries: string[];
  try {
    entries = readdirSync(mountPoint);
  } catch {
    return false;
  }
  return entries.some((name) => (name === DATA_DIR_LINK || isPayloadDirName(name))
    && lstatSync(join(mountPoint, name, VERSIONS_FILE), { throwIfNoEntry: false })?.isFile() === true);
}

/** The mount points of tmpfs mounts named `source` in mountinfo text, deduplicated, in order. */
export function ownTmpfsMountPoints(mountInfo: string, source: string): string[] {
  return [...new Set(parseMountInfo(mountInfo).filter((e) => e.fsType === 'tmpfs' && e.source === source).map((e) => e.mountPoint))];
}

/**
 * At start, before kubelet's first call: mends every volume this driver instance mounted
 * (tmpfs named `source`, see volumeMountSource) with its payload layout, that a
 * crash (SIGKILL, OOM kill) left mid-write, so pods
 * never keep seeing dangling links or a half-written payload until the next rotation.
 * Returns how many volumes were repaired; a volume that cannot be repaired is logged and
 * left for its next write.
 */
export async function repairMountedVolumes(source: string, logger: Logger, mountInfoPath = '/proc/self/mountinfo'): Promise<number> {
  const text = await readFile(mountInfoPath, 'utf8').catch(() => '');
  const pacer = new Pacer();
  let count = 0;
  for (const mountPoint of ownTmpfsMountPoints(text, source)) {
    if (!isDriverVolume(mountPoint)) continue;
    try {
      const result = await repairTarget(mountPoint, pacer);
      if (!repaired(result)) continue;
      count++;
      logger.info('repaired a volume left incomplete by a crash', { targetPath: mountPoint, ...repairCounts(result) });
    } catch (err) {
      logger.warn('could not repair a volume at start; its next write repairs it', { targetPath: mountPoint, error: toSscError(err).message });
    }
  }
  return count;
}
