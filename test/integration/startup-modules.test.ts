import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Issue 15: every package a process loads at startup costs RSS it keeps. The driver's
// startup path (local and Kubernetes mode) loads no YAML parser (only a --kubeconfig
// file or an --spc-dir class needs it) and neither process loads winston or prom-client
// (replaced by proto/runtime/logger.ts and proto/runtime/metrics/).

const DIST = fileURLToPath(new URL('../../', import.meta.url));

/** The npm packages loaded after importing `modules` (dist-relative) in a fresh node, then calling `exported` of the last one. */
function packagesLoadedBy(modules: readonly string[], exported?: string): string[] {
  const script = `
import { createRequire } from 'node:module';
let last;
for (const m of ${JSON.stringify(modules.map((m) => pathToFileURL(`${DIST}${m}`).href))}) last = await import(m);
${exported ? `last[${JSON.stringify(exported)}]();` : ''}
const cache = createRequire(import.meta.url)('node:module')._cache;
const names = new Set(Object.keys(cache).map((f) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(f)?.[1]).filter(Boolean));
process.stdout.write(JSON.stringify([...names].sort()));
`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
}

describe('packages loaded at startup (issue 15: memory)', () => {
  it('the driver, in local and Kubernetes mode, loads no yaml, winston or prom-client', () => {
    const loaded = packagesLoadedBy(['driver/main.js', 'driver/k8s/kubernetes-mode.js', 'driver/rotation/rotation-mode.js']);
    expect(loaded.filter((p) => ['yaml', 'winston', 'prom-client'].includes(p))).to.deep.equal([]);
    // The check itself sees a package once it is loaded.
    expect(packagesLoadedBy(['driver/main.js', 'proto/runtime/lazy-yaml.js'], 'yamlModule')).to.include('yaml');
  });

  it('a provider loads no winston or prom-client', () => {
    const loaded = packagesLoadedBy(['providers/framework/run-provider.js', 'providers/file/main.js']);
    expect(loaded.filter((p) => ['winston', 'prom-client'].includes(p))).to.deep.equal([]);
  });
});
