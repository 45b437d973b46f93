import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Every package a process loads at startup costs RSS it keeps. The driver's startup path
// (local and Kubernetes mode) loads no YAML parser: only a --kubeconfig file or an
// --spc-dir class needs it. The libraries it runs on (grpc-js, proto-loader, winston,
// prom-client) are loaded, and what they cost is measured in docs/dependencies.md.

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
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as string[];
}

describe('packages loaded at startup (memory)', () => {
  it('the driver, in local and Kubernetes mode, loads no yaml', () => {
    const loaded = packagesLoadedBy([
      'driver/main.js',
      'driver/kubernetes-mode/kubernetes-mode.js',
      'driver/rotation/rotation-mode.js',
    ]);
    expect(loaded).not.to.include('yaml');
    // The check itself sees a package once it is loaded.
    expect(packagesLoadedBy(['driver/main.js', 'lib/lazy-yaml.js'], 'yamlModule')).to.include('yaml');
  });
});

/** Node's own modules loaded after importing `modules` (dist-relative) in a fresh node. */
function builtinsLoadedBy(modules: readonly string[]): string[] {
  const script = `
for (const m of ${JSON.stringify(modules.map((m) => pathToFileURL(`${DIST}${m}`).href))}) await import(m);
process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length))));
`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
  ) as string[];
}

describe('Node modules loaded at startup (memory)', () => {
  // On Node 24 an ESM import of node:http evaluates its lazy exports (undici's WebSocket,
  // EventSource, fetch): undici and worker_threads, ~12 MiB of RSS nobody uses. (zlib is
  // loaded anyway: grpc-js's message compression needs it.)
  const UNUSED = /^(undici|internal\/deps\/undici\/undici|worker_threads)$/;

  it('the driver (local and Kubernetes mode, metrics server) and a provider load no undici or worker_threads', () => {
    const loaded = builtinsLoadedBy([
      'driver/main.js',
      'driver/kubernetes-mode/kubernetes-mode.js',
      'driver/rotation/rotation-mode.js',
      'lib/http-server.js',
      'providers/framework/run-provider.js',
      'providers/file/main.js',
    ]);
    expect(loaded.filter((m) => UNUSED.test(m))).to.deep.equal([]);
    expect(loaded).to.include('http');
  });

  it('the check sees them when an ESM import of node:http loads them (Node 22+)', function () {
    if (Number(process.versions.node.split('.')[0]) < 22) this.skip();
    const script = `import { request } from 'node:http'; void request; process.stdout.write(JSON.stringify(process.moduleLoadList));`;
    const loaded = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as string[];
    expect(loaded.some((m) => /undici|worker_threads/.test(m))).to.equal(true);
  });
});
