import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { VOLUME_RECORD_FILE } from '../../driver/rotation/volume-record.js';
import { metadataFileName } from '../../driver/volume/metadata.js';

/** What checkVolume found in a consistent volume. */
export interface VolumeView {
  /** The payload directory `..data` points at. */
  readonly dataDir: string;
  /** Top-level names the pod sees (links into `..data`), sorted. */
  readonly names: readonly string[];
  /** `.metadata/versions.json`'s objects. */
  readonly objects: readonly { id: string; version: string }[];
}

/**
 * Asserts the invariant a pod relies on and returns what the volume holds: `..data` names
 * one payload directory and no other payload directory or `..data_tmp` is left (the
 * driver's volume record may sit beside them); every
 * top-level name is a link `name -> ..data/name` that resolves; every top-level name of
 * the payload has its link; `.metadata/versions.json` lists exactly the objects that have
 * `.metadata/<id>` files, with the same versions. Throws an Error saying what is wrong.
 */
export async function checkVolume(target: string): Promise<VolumeView> {
  const dataDir = await readlink(join(target, '..data'));
  const entries = (await readdir(target)).sort();
  const strays = entries.filter(
    (e) => e.startsWith('..') && e !== '..data' && e !== dataDir && e !== VOLUME_RECORD_FILE,
  );
  if (strays.length > 0) throw new Error(`leftover entries in ${target}: ${strays.join(', ')}`);
  const names = entries.filter((e) => !e.startsWith('..'));
  for (const name of names) {
    const link = await readlink(join(target, name)).catch(() => undefined);
    if (link !== `..data/${name}`) throw new Error(`${name} is not a link into ..data (${String(link)})`);
    if (
      await lstat(join(target, dataDir, name)).then(
        () => false,
        () => true,
      )
    )
      throw new Error(`${name} dangles: ..data has no ${name}`);
  }
  const payloadNames = (await readdir(join(target, dataDir))).sort();
  if (JSON.stringify(payloadNames) !== JSON.stringify(names))
    throw new Error(`links ${JSON.stringify(names)} differ from the payload's names ${JSON.stringify(payloadNames)}`);
  const doc = JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as {
    objects: { id: string; version: string }[];
  };
  const metadataNames = (await readdir(join(target, '.metadata'))).filter((n) => n !== 'versions.json').sort();
  const expected = doc.objects.map((o) => metadataFileName(o.id)).sort();
  if (JSON.stringify(metadataNames) !== JSON.stringify(expected))
    throw new Error(`.metadata files ${metadataNames.length} differ from versions.json's ${expected.length} objects`);
  for (const o of doc.objects) {
    const version = await readFile(join(target, '.metadata', metadataFileName(o.id)), 'utf8');
    if (version !== o.version) throw new Error(`.metadata for ${o.id} says ${version}, versions.json ${o.version}`);
  }
  return { dataDir, names, objects: doc.objects };
}
