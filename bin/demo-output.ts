// What the demo prints: step headings, indented lines, a volume's tree and its versions.
// Shared by the file provider's part (demo.ts) and the vault provider's (demo-vault.ts).
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Prints a step heading (`==> text`); the signal tests wait for these. */
export function step(text: string): void {
  process.stdout.write(`\n==> ${text}\n`);
}

/** Prints one indented line under the current step. */
export function line(text: string): void {
  process.stdout.write(`    ${text}\n`);
}

/** Lists a volume the way `ls -lR` would, with link targets and octal modes. */
export async function showTree(dir: string, rel = ''): Promise<void> {
  for (const name of (await readdir(join(dir, rel))).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const s = await lstat(join(dir, path));
    const mode = (s.mode & 0o777).toString(8).padStart(4, '0');
    if (s.isSymbolicLink()) line(`${mode}  ${path} -> ${await readlink(join(dir, path))}`);
    else if (s.isDirectory()) {
      line(`${mode}  ${path}/`);
      if (path.startsWith('..')) await showTree(dir, path);
    } else line(`${mode}  ${path}  (${s.size} bytes)`);
  }
}

/** Prints .metadata/versions.json: each object's version (shortened) and the write time. */
export async function showVersions(target: string): Promise<void> {
  const doc = JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as {
    objects: { id: string; version: string }[];
    writeTime: string;
  };
  for (const o of doc.objects) line(`${o.id.padEnd(14)} version ${o.version.slice(0, 16)}…`);
  line(`written at ${doc.writeTime}`);
}

/** Prints what the pod reads in `files`: each file's first 40 characters, as JSON text (the demo's own sample values). */
export async function showContents(target: string, files: readonly string[]): Promise<void> {
  for (const file of files)
    line(`${file}: ${JSON.stringify((await readFile(join(target, file), 'utf8')).slice(0, 40))}`);
}
