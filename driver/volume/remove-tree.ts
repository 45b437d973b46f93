import { lstatSync, rmdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Pacer } from '../../lib/pacer.js';
import { dirEntries } from './dir-entries.js';

/**
 * Removes `path` and everything below it, like `rm -rf`, without recursion: a tree of any
 * depth is walked with an explicit stack, so a deeply nested payload (a provider once sent
 * a path 2,000 levels deep) cannot overflow the call stack. Symlinks are removed, never
 * followed. A missing path is success. With a pacer, the event loop gets a turn every few
 * milliseconds of a large removal.
 */
export async function removeTree(path: string, pacer?: Pacer): Promise<void> {
  const top = lstatSync(path, { throwIfNoEntry: false });
  if (top === undefined) return;
  if (!top.isDirectory()) {
    unlinkSync(path);
    return;
  }
  // Each directory is pushed once to be listed and once more (listed) to be removed after its entries.
  const stack: { dir: string; listed: boolean }[] = [{ dir: path, listed: false }];
  while (stack.length > 0) {
    const top = stack.pop() as { dir: string; listed: boolean };
    if (top.listed) {
      rmdirSync(top.dir);
      continue;
    }
    stack.push({ dir: top.dir, listed: true });
    for await (const entry of dirEntries(top.dir, pacer)) {
      const child = join(top.dir, entry.name);
      if (entry.isDirectory()) stack.push({ dir: child, listed: false });
      else unlinkSync(child);
    }
  }
}
