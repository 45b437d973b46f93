import { opendirSync, type Dirent } from 'node:fs';
import type { Pacer } from '../../lib/pacer.js';

/**
 * The entries of a directory, read a few at a time (opendir(3)), with the pacer given a
 * chance after each: one readdirSync of a 250,000-entry payload held the event loop for
 * 150-225 ms. Entries may be removed while iterating (Linux getdents keeps its place).
 */
export async function* dirEntries(path: string, pacer?: Pacer): AsyncGenerator<Dirent> {
  const dir = opendirSync(path);
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      yield entry;
      if (pacer?.due()) await pacer.pause();
    }
  } finally {
    dir.closeSync();
  }
}
