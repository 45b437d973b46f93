import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layout docs/architecture.md describes: folders depend on each other in one direction
// (ESLint's import-x/no-cycle checks files; this checks folders, which it cannot), and
// proto/ holds only the .proto files and the types generated from them.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE_ROOTS = ['lib', 'driver', 'providers', 'bin', 'proto'];

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(REPO, dir)).sort()) {
    const path = join(dir, name);
    if (statSync(join(REPO, path)).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Folder → the folders its files import, with one example import per edge. */
function folderEdges(files: readonly string[], read: (file: string) => string): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = dirname(file);
    for (const m of read(file).matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = normalize(join(from, m[1] as string));
      const to = dirname(target);
      // A folder may use its own subfolders (driver/k8s uses driver/k8s/client); the
      // reverse, a subfolder reaching up into its parent's files, counts as an edge.
      if (to === from || to.startsWith(`${from}/`)) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${file} imports ${relative(from, target)}`);
      edges.set(from, out);
    }
  }
  return edges;
}

/** The folder cycles of a graph, each as the path that closes it (a → b → a). */
function cyclesOf(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('layout', () => {
  it('finds a folder cycle when there is one (the check can fail)', () => {
    const files = ['a/x.ts', 'b/y.ts', 'c/z.ts'];
    const text: Record<string, string> = {
      'a/x.ts': "import { y } from '../b/y.js';",
      'b/y.ts': "import type { z } from '../c/z.js';",
      'c/z.ts': "export const z = await import('../a/x.js');",
    };
    expect(cyclesOf(folderEdges(files, (f) => text[f] ?? ''))).to.deep.equal([['a', 'b', 'c', 'a']]);
  });

  it('no import cycle between folders of the shipped code', () => {
    const files = SOURCE_ROOTS.flatMap(tsFiles);
    const edges = folderEdges(files, (f) => readFileSync(join(REPO, f), 'utf8'));
    const described = cyclesOf(edges).map((cycle) =>
      cycle
        .slice(1)
        .map((to, i) => edges.get(cycle[i] as string)?.get(to))
        .join('; '),
    );
    expect(described).to.deep.equal([]);
  });

  it('proto/ holds only .proto files and the types generated from them', () => {
    const stray = tsFiles('proto').filter((f) => !f.startsWith('proto/gen/'));
    const protos = readdirSync(join(REPO, 'proto'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.proto'));
    expect(stray).to.deep.equal([]);
    expect(protos).to.include.members(['csi/csi.proto', 'provider/service.proto']);
  });
});
