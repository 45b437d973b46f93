import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The images install only package.json's "dependencies" (npm prune --omit=dev): code that
// ships must not import a devDependency (such as @kubernetes/client-node, which the tests
// use to set up clusters), or the driver would fail at runtime in the image only.

const DIST = fileURLToPath(new URL('../../', import.meta.url)); // dist/
const REPO = join(DIST, '..');

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

/** Bare package names a compiled file imports (static and dynamic). */
function importedPackages(source: string): string[] {
  const specifiers = [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)].map(
    (m) => m[1] ?? '',
  );
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : (s.split('/')[0] ?? s)));
}

describe('shipped code imports only shipped dependencies', () => {
  it('driver, providers, lib, proto and bin import only package.json dependencies and Node built-ins', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const allowed = new Set([...Object.keys(pkg.dependencies), ...builtinModules]);
    const offending: string[] = [];
    for (const dir of ['driver', 'providers', 'lib', 'proto', 'bin']) {
      for (const file of jsFiles(join(DIST, dir))) {
        for (const name of importedPackages(readFileSync(file, 'utf8')))
          if (!allowed.has(name)) offending.push(`${file.slice(DIST.length)}: ${name}`);
      }
    }
    expect(offending).to.deep.equal([]);
  });
});
