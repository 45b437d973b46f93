import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseVolumeRecord, VOLUME_RECORD_FILE, type VolumeRecord } from './volume-record.js';

/** A record is a few hundred bytes; anything much larger is not one of ours. */
const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Writes `text` to `path` atomically (a temp file renamed over it), mode 0600: a crash
 * leaves the old file or the new one, never half of one.
 */
async function writeFileAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  await rm(tmp, { force: true });
  await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
  await chmod(tmp, 0o600); // whatever the umask
  await rename(tmp, path);
}

/** Writes a target's volume record (root-owned when the driver is root, 0600: pods running as non-root cannot read it). */
export async function writeVolumeRecord(targetPath: string, text: string): Promise<void> {
  await writeFileAtomically(join(targetPath, VOLUME_RECORD_FILE), text);
}

/**
 * Reads a target's volume record: undefined when there is none; throws (saying why)
 * when the file is there but not one this driver's user wrote: a symlink, another
 * owner, readable by others, too large, or not a valid record.
 */
export async function readVolumeRecord(targetPath: string): Promise<VolumeRecord | undefined> {
  let handle;
  try {
    handle = await open(
      join(targetPath, VOLUME_RECORD_FILE),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new Error(code === 'ELOOP' ? 'it is a symlink' : `it cannot be opened (${code ?? 'error'})`, { cause: err });
  }
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw new Error('it is not a regular file');
    if (s.uid !== process.getuid?.()) throw new Error(`it is owned by uid ${s.uid}, not the driver's`);
    if ((s.mode & 0o077) !== 0) throw new Error('others may read or write it');
    if (s.size > MAX_RECORD_BYTES) throw new Error('it is too large');
    return parseVolumeRecord(await handle.readFile('utf8'));
  } finally {
    await handle.close();
  }
}

/**
 * `--mount-mode=dir` has no mountinfo to find volumes in: this folder keeps one small
 * file per published target holding its path (nothing else), so a restarted driver knows
 * where to look for records. Entries are hints: the record in the target decides.
 */
export class RecordIndex {
  constructor(readonly dir: string) {}

  private entryPath(targetPath: string): string {
    return join(this.dir, createHash('sha256').update(targetPath).digest('hex').slice(0, 40));
  }

  /** Remembers a target. */
  async add(targetPath: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomically(this.entryPath(targetPath), targetPath);
  }

  /** Forgets a target (a missing entry is fine). */
  async remove(targetPath: string): Promise<void> {
    await rm(this.entryPath(targetPath), { force: true });
  }

  /** Every remembered target path; none when the folder does not exist yet. */
  async list(): Promise<string[]> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    const targets: string[] = [];
    for (const name of names) {
      if (!/^[0-9a-f]{40}$/.test(name)) continue; // temp files of an interrupted add
      const target = await readFile(join(this.dir, name), 'utf8').catch(() => undefined);
      if (target?.startsWith('/')) targets.push(target);
    }
    return targets;
  }
}
