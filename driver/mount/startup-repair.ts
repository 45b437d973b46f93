import { readFile } from 'node:fs/promises';
import { toSscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import { Pacer } from '../../lib/pacer.js';
import { parseMountInfo } from './mountinfo.js';
import { repairCounts, repaired, repairTarget } from '../volume/payload-repair.js';

/** The mount points of tmpfs mounts named `source` in mountinfo text, deduplicated, in order. */
export function ownTmpfsMountPoints(mountInfo: string, source: string): string[] {
  return [
    ...new Set(
      parseMountInfo(mountInfo)
        .filter((e) => e.fsType === 'tmpfs' && e.source === source)
        .map((e) => e.mountPoint),
    ),
  ];
}

/** The mount points of this driver instance's volumes (tmpfs named `source`) in this mount namespace. */
export async function readOwnTmpfsMountPoints(
  source: string,
  mountInfoPath = '/proc/self/mountinfo',
): Promise<string[]> {
  return ownTmpfsMountPoints(await readFile(mountInfoPath, 'utf8'), source);
}

/**
 * At start, before kubelet's first call: mends every volume this driver instance mounted
 * (tmpfs named `source`, see volumeMountSource; the name alone says it is ours) that a
 * crash (SIGKILL, OOM kill) left mid-write, so pods
 * never keep seeing dangling links or a half-written payload until the next rotation.
 * Returns how many volumes were repaired; a volume that cannot be repaired is logged and
 * left for its next write.
 */
export async function repairMountedVolumes(
  source: string,
  logger: Logger,
  mountInfoPath = '/proc/self/mountinfo',
): Promise<number> {
  const mountPoints = await readOwnTmpfsMountPoints(source, mountInfoPath).catch(() => []);
  const pacer = new Pacer();
  let count = 0;
  for (const mountPoint of mountPoints) {
    try {
      const result = await repairTarget(mountPoint, pacer);
      if (!repaired(result)) continue;
      count++;
      logger.info('repaired a volume left incomplete by a crash', { targetPath: mountPoint, ...repairCounts(result) });
    } catch (err) {
      logger.warn('could not repair a volume at start; its next write repairs it', {
        targetPath: mountPoint,
        error: toSscError(err).message,
      });
    }
  }
  return count;
}
