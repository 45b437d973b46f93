/**
 * The whole test suite (`npm test`): installs the pinned third-party peers (cached),
 * then runs every unit and integration test with mocha in one process and ends with
 * the line CI reads: `N passed, N failed, N skipped`.
 *   node dist/test/run.js [--unit] [--grep PATTERN] [--files PATTERN]
 * (--files: only the test files whose path matches the regular expression)
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Mocha from 'mocha';
import { stopSharedCluster } from './support/kube-cluster.js';

const DIST_TEST = fileURLToPath(new URL('.', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

function testFiles(dir: string): string[] {
  let files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files = files.concat(testFiles(path));
    else if (name.endsWith('.test.js')) files.push(path);
  }
  return files;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unitOnly = args.includes('--unit');
  const grepAt = args.indexOf('--grep');
  const filesAt = args.indexOf('--files');
  const only = filesAt >= 0 && args[filesAt + 1] ? new RegExp(args[filesAt + 1] as string) : undefined;
  if (!unitOnly && process.env['SSC_SKIP_PEER_INSTALL'] !== '1') {
    process.stdout.write('installing test peers (pinned, cached)…\n');
    execFileSync('bash', [join(REPO, 'test/peers/install.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  }
  // The shared test cluster (etcd + kube-apiserver) is started by the first test that
  // needs it and stopped once after all tests.
  const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', rootHooks: { afterAll: [stopSharedCluster] } });
  if (grepAt >= 0 && args[grepAt + 1]) mocha.grep(args[grepAt + 1] as string);
  // e2e: pods through a real kubelet and containerd (skipped with a printed reason where the machine lacks them).
  const dirs = unitOnly ? ['unit', 'repo'] : ['unit', 'repo', 'integration', 'e2e'];
  for (const d of dirs)
    for (const f of testFiles(join(DIST_TEST, d))) if (!only || only.test(f.slice(DIST_TEST.length))) mocha.addFile(f);
  await mocha.loadFilesAsync();
  const runner = mocha.run();
  runner.on('end', () => {
    const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
    process.stdout.write(`\n${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    process.exitCode = s.failures > 0 || s.passes === 0 ? 1 : 0;
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`test run failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.stdout.write('\n0 passed, 1 failed\n');
  process.exitCode = 1;
});
