import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_PATH } from '../bin/child-process.js';
import { CsiClient, inlinePublishRequest, inlineVolumeContext } from '../bin/csi-client.js';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../test/support/openbao.js';
import { enableJwtAuth, type JwtAuth } from '../test/support/vault-provider.js';
import {
  benchNode,
  chooseMountMode,
  localDriverArgs,
  processNodeFlags,
  BenchProcess,
  type MountMode,
} from './processes.js';
import { loggedPort, metricSum, scrape } from './rounds.js';
import { progressLine, removeWorkDir } from './run-control.js';
import {
  machineLine,
  positiveIntEnv,
  runBench,
  startBenchRun,
  table,
  writeBenchResults,
  type BenchRunHeader,
} from './report.js';

/**
 * `npm run bench:throttle`: a vault that throttles. N volumes (default 100) of one class,
 * read by one service account, mounted through the real driver (local mode,
 * --enable-secret-rotation) and vault provider from a real OpenBao; then a rate-limit
 * quota makes OpenBao answer 429 (with Retry-After) to nearly every read, and from the
 * first throttled Mount on the benchmark counts the Mount calls the provider receives
 * over a window (default 120 s).
 * BENCH_BASELINE_CLI=<another checkout>/dist/bin/cli.js runs that build the same way, side
 * by side (how bench/README.md's "before" row was measured).
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/throttle.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');
const SPC = 'throttled';
const INTERVAL = '10s';

interface Variant {
  readonly label: string;
  readonly cli: string;
}

interface VariantResult {
  readonly label: string;
  readonly volumes: number;
  readonly windowSeconds: number;
  /** Mount calls the provider received in the window, by gRPC code. */
  readonly mountCalls: number;
  readonly mountCallsOk: number;
  readonly mountCallsPerMinute: number;
  /** Reads the provider sent to Vault in the window (its read cache's misses): what the throttled vault saw. */
  readonly vaultReads: number;
  readonly vaultReadsPerMinute: number;
}

interface ThrottleResults extends BenchRunHeader<'throttle'> {
  readonly mountMode: MountMode;
  readonly config: { readonly volumes: number; readonly windowSeconds: number; readonly rotationPollInterval: string };
  readonly results: readonly VariantResult[];
}

const CLASS_YAML = `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${SPC}
  namespace: default
spec:
  provider: vault
  parameters:
    roleName: bench
    vaultAuthMountPath: jwt
    objects: |
      - {objectName: password, secretPath: secret/data/bench/db, secretKey: password}
`;

/** `secrets-store-csi <args>` of the build at `variant.cli`, with the images' node flags. */
function startCli(variant: Variant, label: string, args: readonly string[], ready: RegExp): Promise<BenchProcess> {
  const argv = [...processNodeFlags(undefined), variant.cli, ...args];
  return BenchProcess.startBinary(`${label} (${variant.label})`, benchNode().path, argv, ready);
}

/** OpenBao with JWT auth (role `bench`, audience vault) and the one secret the class reads. */
async function startVault(): Promise<{ bao: OpenBao; jwt: JwtAuth }> {
  const bao = await startOpenBao();
  await bao.putPolicy('bench', 'path "secret/data/bench/*" { capabilities = ["read"] }');
  const jwt = await enableJwtAuth(bao, 'jwt', { bench: ['bench'] });
  await bao.write('secret/data/bench/db', { data: { password: randomUUID() } });
  await bao.write('sys/quotas/config', { enable_rate_limit_response_headers: true });
  return { bao, jwt };
}

/** A rate-limit quota on the KV mount: one request a minute, so nearly every read is answered 429. */
const throttle = (bao: OpenBao) =>
  bao.write('sys/quotas/rate-limit/bench', { path: 'secret/', rate: 1, interval: '60s' });
const unthrottle = (bao: OpenBao) => bao.request('DELETE', 'sys/quotas/rate-limit/bench');

/** One variant: mount the volumes, throttle, count the provider's Mount calls over the window. */
async function runVariant(
  variant: Variant,
  vault: { bao: OpenBao; jwt: JwtAuth },
  volumes: number,
  windowSeconds: number,
  mountMode: MountMode,
): Promise<VariantResult> {
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-throttle-'));
  const processes: BenchProcess[] = [];
  const client = new CsiClient(join(work, 'csi.sock'));
  try {
    await mkdir(join(work, 'classes'));
    await mkdir(join(work, 'providers'));
    await writeFile(join(work, 'classes', `${SPC}.yaml`), CLASS_YAML);
    const provider = await startCli(
      variant,
      'vault provider',
      [
        'provider',
        'vault',
        `--endpoint=unix://${join(work, 'providers', 'vault.sock')}`,
        `--vault-addr=${vault.bao.address}`,
        `--hmac-key-file=${join(work, 'hmac.key')}`,
        '--health-addr=127.0.0.1:0',
      ],
      /provider started/,
    );
    processes.push(provider);
    const port = loggedPort(provider, 'healthPort');
    const driver = await startCli(
      variant,
      'driver',
      localDriverArgs(work, join(work, 'csi.sock'), join(work, 'classes'), mountMode, [
        '--enable-secret-rotation',
        `--rotation-poll-interval=${INTERVAL}`,
      ]),
      /driver started/,
    );
    processes.push(driver);
    await publishAll(client, vault.jwt, work, volumes);
    await throttle(vault.bao);
    // The window opens at the first throttled Mount (until then the provider's read cache answers).
    const before = await firstFailure(port);
    await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000));
    const after = await scrape(port);
    const calls = metricSum(after, 'provider_mount_total') - metricSum(before, 'provider_mount_total');
    const ok =
      metricSum(after, 'provider_mount_total', { result: 'success' }) -
      metricSum(before, 'provider_mount_total', { result: 'success' });
    const reads =
      metricSum(after, 'vault_read_cache_total', { result: 'miss' }) -
      metricSum(before, 'vault_read_cache_total', { result: 'miss' });
    return {
      label: variant.label,
      vaultReads: reads,
      vaultReadsPerMinute: Math.round((reads / windowSeconds) * 60 * 10) / 10,
      volumes,
      windowSeconds,
      mountCalls: calls,
      mountCallsOk: ok,
      mountCallsPerMinute: Math.round((calls / windowSeconds) * 60 * 10) / 10,
    };
  } finally {
    await unthrottle(vault.bao).catch(() => undefined);
    for (let i = 0; i < volumes; i++)
      await client.unpublish(`v${i}`, join(work, 'targets', `v${i}`)).catch(() => undefined);
    client.close();
    for (const p of processes.reverse()) await p.stop();
    await removeWorkDir(work, progressLine('throttle'));
  }
}

/** The provider's metrics at its first failed Mount (polled every 200 ms, for at most two minutes). */
async function firstFailure(port: number): Promise<string> {
  const failures = (text: string) => metricSum(text, 'provider_mount_total', { result: 'error' });
  const start = await scrape(port);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    const now = await scrape(port);
    if (failures(now) > failures(start)) return now;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('no Mount failed within two minutes of the quota: is OpenBao throttling?');
}

/** Publishes `volumes` volumes of the class for pods of one service account, 8 at a time. */
async function publishAll(client: CsiClient, jwt: JwtAuth, work: string, volumes: number): Promise<void> {
  const tokens = jwt.tokensAttribute(jwt.token('default/default'));
  const one = async (i: number) => {
    const ctx = inlineVolumeContext(
      { name: `pod-${i}`, namespace: 'default', uid: randomUUID(), serviceAccountName: 'default' },
      SPC,
    );
    ctx['csi.storage.k8s.io/serviceAccount.tokens'] = tokens;
    await client.publish(inlinePublishRequest(`v${i}`, join(work, 'targets', `v${i}`), ctx));
  };
  for (let i = 0; i < volumes; i += 8) {
    await Promise.all(Array.from({ length: Math.min(8, volumes - i) }, (_, k) => one(i + k)));
  }
}

async function main(): Promise<void> {
  const unavailable = openBaoUnavailable();
  if (unavailable) throw new Error(`needs OpenBao: ${unavailable}`);
  const run = await startBenchRun('throttle', REPO_DIR);
  const volumes = positiveIntEnv('BENCH_THROTTLE_VOLUMES', 100);
  const windowSeconds = positiveIntEnv('BENCH_THROTTLE_SECONDS', 120);
  const { mode } = chooseMountMode();
  const baseline = process.env['BENCH_BASELINE_CLI'];
  const variants: Variant[] = [
    ...(baseline ? [{ label: `baseline ${baseline}`, cli: baseline }] : []),
    { label: 'this build', cli: CLI_PATH },
  ];
  const vault = await startVault();
  const results: VariantResult[] = [];
  try {
    for (const v of variants) {
      process.stderr.write(`throttle: ${v.label}: ${volumes} volumes, then ${windowSeconds} s of 429s\n`);
      results.push(await runVariant(v, vault, volumes, windowSeconds, mode));
    }
  } finally {
    await vault.bao.stop();
  }
  const out: ThrottleResults = {
    ...run.finish(),
    mountMode: mode,
    config: { volumes, windowSeconds, rotationPollInterval: INTERVAL },
    results,
  };
  const written = await writeBenchResults(RESULTS_DIR, 'throttle', out, !baseline);
  const rows = results.map((r) => [
    r.label,
    String(r.volumes),
    String(r.mountCalls),
    String(r.mountCallsOk),
    String(r.mountCallsPerMinute),
    String(r.vaultReadsPerMinute),
  ]);
  process.stdout.write(
    `${machineLine(out)}\n${volumes} volumes of one class and service account, --rotation-poll-interval=${INTERVAL}, OpenBao answering 429 (rate-limit quota, Retry-After) for ${windowSeconds} s\n` +
      `${table(['build', 'volumes', 'Mount calls', 'of them OK', 'calls/min', 'Vault reads/min'], rows, new Set([1, 2, 3, 4, 5]))}\n` +
      `results: ${written.join(', ')}\n`,
  );
}

runBench('throttle', main);
