import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { METADATA_DIR } from './path-rules.js';
import type { ObjectVersion, Payload, PayloadFile } from './payload.js';

/** The file listing every object, its version and the write time; apps may watch it. */
export const VERSIONS_FILE = `${METADATA_DIR}/versions.json`;
const METADATA_FILE_MODE = 0o644;

/** Contents of `.metadata/versions.json`. */
export interface VersionsDocument {
  readonly objects: readonly ObjectVersion[];
  readonly writeTime: string;
}

/**
 * File name for an object id inside `.metadata/`: percent-encoded so `/` cannot
 * escape the directory, `.`/`..` are escaped, and over-long ids are shortened with a
 * digest so the name stays within NAME_MAX.
 */
export function metadataFileName(id: string): string {
  // `~` is escaped too: it marks shortened names below, so no id can spell one.
  let name = encodeURIComponent(id)
    .replace(/~/g, '%7E')
    .replace(/^\.{1,2}$/, (dots) => '%2E'.repeat(dots.length));
  if (name === 'versions.json') name = '%76ersions.json'; // still decodes to the id, cannot clash
  if (Buffer.byteLength(name) > 200) {
    name = `${name.slice(0, 120)}~${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
  }
  return name;
}

/** Object versions sorted by id, the order used on disk and in status objects. */
export function sortVersions(versions: readonly ObjectVersion[]): ObjectVersion[] {
  return [...versions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The per-object `.metadata/<id>` files: compared on every write like the secrets. */
export function metadataFiles(versions: readonly ObjectVersion[]): Map<string, PayloadFile> {
  return new Map(
    sortVersions(versions).map((v) => [
      `${METADATA_DIR}/${metadataFileName(v.id)}`,
      { mode: METADATA_FILE_MODE, contents: Buffer.from(v.version) },
    ]),
  );
}

/** The volatile `.metadata/versions.json` (its write time alone never forces a rewrite). */
export function versionsFile(versions: readonly ObjectVersion[], now: Date): Payload {
  const doc: VersionsDocument = { objects: sortVersions(versions), writeTime: now.toISOString() };
  return new Map([
    [VERSIONS_FILE, { mode: METADATA_FILE_MODE, contents: Buffer.from(JSON.stringify(doc, null, 2) + '\n') }],
  ]);
}

/** Reads the object versions currently mounted at `targetPath`; empty when none or unreadable. */
export async function readMountedVersions(targetPath: string): Promise<ObjectVersion[]> {
  try {
    const doc = JSON.parse(await readFile(join(targetPath, VERSIONS_FILE), 'utf8')) as Partial<VersionsDocument>;
    if (!Array.isArray(doc.objects)) return [];
    return doc.objects
      .filter((o): o is ObjectVersion => typeof o?.id === 'string' && typeof o?.version === 'string')
      .map((o) => ({ id: o.id, version: o.version }));
  } catch {
    return [];
  }
}
