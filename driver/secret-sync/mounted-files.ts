import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretObject } from '../spc/secret-provider-class.js';
import { pathProblem } from '../volume/path-rules.js';

/**
 * Reads the files a SecretObject needs from the mounted volume. Each file must resolve
 * (through the volume's own links) to a place inside the volume: the driver runs as
 * root, and a Secret must never carry a file from elsewhere on the node.
 */
export async function readMountedFiles(targetPath: string, object: SecretObject): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const root = await realpath(targetPath);
  for (const { objectName } of object.data) {
    if (files.has(objectName) || pathProblem(objectName)) continue;
    try {
      const resolved = await realpath(join(targetPath, objectName));
      if (!resolved.startsWith(`${root}/`)) continue;
      files.set(objectName, await readFile(resolved));
    } catch {
      // Absent files are reported by buildSecretData with the Secret's name.
    }
  }
  return files;
}
