import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layout docs/architecture.md describes: folders depend on each other in one direction
// (ESLint's import-x/no-cycle checks files but skips type-only imports; this checks both,
// and folders, which it cannot), and
// proto/ holds only the .proto files and the types generated from them.

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE_ROOTS = ['lib', 'driver', 'sync-controller', 'providers', 'bin', 'proto'];

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(REPO, dir)).sort()) {
    const path = join(dir, name);
    if (statSync(join(REPO, path)).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * Node → the nodes it imports, with one example import per edge; a node is a file
 * (`byFolder` false) or a folder.
 */
function importEdges(
  files: readonly string[],
  read: (file: string) => string,
  byFolder: boolean,
): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = byFolder ? dirname(file) : file;
    for (const m of read(file).matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = normalize(join(dirname(file), m[1] as string)).replace(/\.js$/, '.ts');
      const to = byFolder ? dirname(target) : target;
      // A folder may use its own subfolders (driver/k8s uses driver/k8s/client); the
      // reverse, a subfolder reaching up into its parent's files, counts as an edge.
      if (to === from || (byFolder && to.startsWith(`${from}/`))) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${file} imports ${m[1] as string}`);
      edges.set(from, out);
    }
  }
  return edges;
}

/** The cycles of a graph, each as the path that closes it (a → b → a). */
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
  it('finds a cycle of folders and of files when there is one (the check can fail)', () => {
    const files = ['a/x.ts', 'b/y.ts', 'c/z.ts'];
    const text: Record<string, string> = {
      'a/x.ts': "import { y } from '../b/y.js';",
      'b/y.ts': "import type { z } from '../c/z.js';",
      'c/z.ts': "export const z = await import('../a/x.js');",
    };
    expect(cyclesOf(importEdges(files, (f) => text[f] ?? '', true))).to.deep.equal([['a', 'b', 'c', 'a']]);
    expect(cyclesOf(importEdges(files, (f) => text[f] ?? '', false))).to.deep.equal([
      ['a/x.ts', 'b/y.ts', 'c/z.ts', 'a/x.ts'],
    ]);
  });

  for (const [what, byFolder] of [
    ['folders', true],
    ['files, type-only imports included', false],
  ] as const) {
    it(`no import cycle between ${what} of the shipped code`, () => {
      const files = SOURCE_ROOTS.flatMap(tsFiles);
      const edges = importEdges(files, (f) => readFileSync(join(REPO, f), 'utf8'), byFolder);
      const described = cyclesOf(edges).map((cycle) =>
        cycle
          .slice(1)
          .map((to, i) => edges.get(cycle[i] as string)?.get(to))
          .join('; '),
      );
      expect(described).to.deep.equal([]);
    });
  }

  it('proto/ holds only .proto files and the types generated from them', () => {
    const stray = tsFiles('proto').filter((f) => !f.startsWith('proto/gen/'));
    const protos = readdirSync(join(REPO, 'proto'), { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.proto'),
    );
    expect(stray).to.deep.equal([]);
    expect(protos).to.include.members(['csi/csi.proto', 'provider/service.proto']);
  });
});
