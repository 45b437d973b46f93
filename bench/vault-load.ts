import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient } from '../bin/csi-client.js';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../test/support/openbao.js';
import { kubernetesUnavailable, startBenchClusterWith, type BenchCluster } from './kube-env.js';
import { mib, processCpuMs, processMemory } from './proc.js';
import {
  benchNodeFlags,
  chooseMountMode,
  startDriver,
  startVaultProvider,
  usesImageNodeFlags,
  withDriverSession,
  type BenchProcess,
} from './processes.js';
import { runBench, startBenchRun, writeBenchResults } from './report.js';
import {
  DriverPause,
  holdUntil,
  loggedPort,
  metricSum,
  nextRound,
  parseLogLine,
  runLimited,
  scrape,
  Volumes,
  VOLUME_NAME,
  type BenchPod,
  type Volume,
} from './rounds.js';
import { DEFAULT_READ_WINDOW_MS } from '../providers/framework/read-cache.js';
import { VaultAudit } from '../test/support/vault-audit.js';
import { vaultLoadTraffic } from './vault-traffic.js';
import {
  benchSecrets,
  configureVault,
  LOGIN_TTL,
  VAULT_AUTH_MOUNT,
  openBaoVersion,
  REVIEWER_SERVICE_ACCOUNT,
  VAULT_AUDIENCE,
  vaultClassSpec,
  WORKLOAD_SERVICE_ACCOUNT,
  type BenchSecret,
} from './vault-env.js';
import { formatVaultLoadReport, vaultLoadTargets, type VaultLoadResults, type VaultLoadRow } from './vault-report.js';
import { Interrupt, progressLine, removeWorkDir } from './run-control.js';

/**
 * `npm run bench:vault` (and part of `npm run bench`): the Vault traffic of one workload at
 * scale. N pods of one ServiceAccount and one class with provider vault are published like
 * kubelet against a real driver (Kubernetes mode, rotation on), the real vault provider and
 * a real OpenBao; the OpenBao audit log counts every request of the publish and of one
 * full rotation round, next to what one login and one read per pod and object would cost.
 */

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/vault-load.js → repo root
const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

const OBJECTS = 5;
const OBJECT_SIZE = 1024;
const DEFAULT_PODS = 100;
/** Long enough that no round runs during the publish (checked), short enough to keep the run under a minute. */
const POLL_INTERVAL_MS = 10_000;
const ROTATION_FLAGS = ['--enable-secret-rotation', `--rotation-poll-interval=${POLL_INTERVAL_MS / 1000}s`];
/** The schedule puts a volume at lastAttempt + interval + up to 10 % of it (driver/rotation/schedule.ts). */
const JITTER_FRACTION = 0.1;
/**
 * The vault provider's default --read-cache-window: the paused driver is held at least this
 * long after the last round too, so the measured round starts with nothing cached from it.
 */
const READ_CACHE_WINDOW_MS = DEFAULT_READ_WINDOW_MS;
const HOLD_MARGIN_MS = 300;
/** Concurrent NodePublish calls, as kubelet starting many pods at once would make them. */
const PUBLISH_CONCURRENCY = 8;
const ROUND_TIMEOUT_MS = 180_000;

const interrupt = new Interrupt();

const progress = progressLine('vault-load');

/** BENCH_VAULT_PODS: how many pods (default 100). */
function podCount(): number {
  const raw = process.env['BENCH_VAULT_PODS'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_PODS;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`BENCH_VAULT_PODS must be a positive integer, got "${raw}"`);
  return n;
}

/** Why the benchmark cannot run here (it needs the Kubernetes mode of the rotation benchmark and OpenBao), or undefined. */
function unavailable(): string | undefined {
  return kubernetesUnavailable() ?? openBaoUnavailable();
}

interface Stack {
  readonly work: string;
  readonly audit: VaultAudit;
  readonly kube: BenchCluster;
  readonly bao: OpenBao;
  readonly provider: BenchProcess;
  /** Read once at start: the log's tail soon scrolls past it. */
  readonly providerMetricsPort: number;
  readonly secrets: readonly BenchSecret[];
  readonly checks: Record<string, boolean>;
}

function check(stack: Stack, name: string, ok: boolean, detail: string): void {
  stack.checks[name] = (stack.checks[name] ?? true) && ok;
  if (!ok) progress(`CHECK FAILED ${name}: ${detail}`);
}

/** Whether a volume's files hold exactly the secrets' values. */
async function contentsMatch(stack: Stack, v: Volume): Promise<boolean> {
  for (const s of stack.secrets) {
    if ((await readFile(join(v.target, s.objectName), 'utf8').catch(() => '')) !== s.value) return false;
  }
  return true;
}

/** Audit-log offset, CPU times and provider Mount count at the start of a measured stretch. */
async function snapshot(
  stack: Stack,
  driver: BenchProcess,
): Promise<{ audit: number; driverCpu: number; providerCpu: number; mounts: number }> {
  const [audit, driverCpu, providerCpu, metrics] = await Promise.all([
    stack.audit.mark(),
    processCpuMs(driver.pid),
    processCpuMs(stack.provider.pid),
    scrape(stack.providerMetricsPort),
  ]);
  return { audit, driverCpu, providerCpu, mounts: metricSum(metrics, 'provider_mount_total') };
}

/** The row of a stretch that began at `before` and lasted `wallMs`. */
async function row(
  stack: Stack,
  driver: BenchProcess,
  before: Awaited<ReturnType<typeof snapshot>>,
  fields: { id: VaultLoadRow['id']; label: string; pods: number; wallMs: number },
): Promise<VaultLoadRow> {
  const after = await snapshot(stack, driver);
  const vault = vaultLoadTraffic(await stack.audit.since(before.audit), VAULT_AUTH_MOUNT);
  const mem = await processMemory(stack.provider.pid);
  return {
    ...fields,
    vault,
    naive: {
      logins: fields.pods,
      reads: fields.pods * stack.secrets.length,
      total: fields.pods * (1 + stack.secrets.length),
    },
    driverCpuMs: after.driverCpu - before.driverCpu,
    providerCpuMs: after.providerCpu - before.providerCpu,
    providerRssMiB: mib(mem.rssKiB),
    providerPeakMiB: mib(mem.hwmKiB),
    providerMountCalls: after.mounts - before.mounts,
  };
}

/**
 * One driver with N volumes: the publish is the first row; then, as in the rotation
 * benchmark, the driver is paused right after a round until every volume is due (and the
 * provider's read cache has expired), resumed, and that one round is the second row.
 */
async function measure(
  stack: Stack,
  n: number,
  mountMode: 'tmpfs' | 'dir',
  cpuProfDir: string | undefined,
): Promise<{ rows: VaultLoadRow[]; heldMs: number }> {
  const socket = join(stack.work, 'csi.sock');
  const driver = await startDriver(stack.work, socket, '', mountMode, cpuProfDir, [
    ...ROTATION_FLAGS,
    `--kubeconfig=${stack.kube.kubeconfig}`,
  ]);
  const driverMetricsPort = loggedPort(driver, 'metricsPort');
  const client = new CsiClient(socket);
  const volumes = new Volumes(
    client,
    join(stack.work, 'kubelet'),
    'bench-vault',
    PUBLISH_CONCURRENCY,
    interrupt.signal,
  );
  const pauser = new DriverPause(driver);
  return withDriverSession(
    driver,
    client,
    () => volumes.unpublishAll(),
    progress,
    async () => {
      let roundsDuringPublish = 0;
      const offRounds = driver.onLine((line) => {
        if (parseLogLine(line)?.message === 'rotation round done') roundsDuringPublish++;
      });
      try {
        if (!(await client.probe())) throw new Error('driver Probe: not ready');
        progress(
          `creating ${n} pods of ServiceAccount ${WORKLOAD_SERVICE_ACCOUNT} and a token for each (audience ${VAULT_AUDIENCE}, bound to the pod)`,
        );
        const created = await stack.kube.createPods(
          n,
          'bench-node',
          'bench-vault',
          VOLUME_NAME,
          'web',
          WORKLOAD_SERVICE_ACCOUNT,
        );
        const pods: BenchPod[] = [];
        await runLimited(
          created,
          PUBLISH_CONCURRENCY,
          async (pod) => {
            pods.push({ ...pod, tokens: await stack.kube.serviceAccountTokens(pod, [VAULT_AUDIENCE]) });
          },
          interrupt.signal,
        );

        progress(`publishing ${n} volumes of ${stack.secrets.length} objects, ${PUBLISH_CONCURRENCY} at a time`);
        const publishBefore = await snapshot(stack, driver);
        const t0 = performance.now();
        const vols = await volumes.publish(pods);
        const publishRow = await row(stack, driver, publishBefore, {
          id: 'initial-publish',
          label: `initial publish of ${n} pods`,
          pods: n,
          wallMs: Math.round(performance.now() - t0),
        });
        offRounds();
        check(
          stack,
          'publish-without-rotation-rounds',
          roundsDuringPublish === 0,
          `${roundsDuringPublish} rotation round(s) ran during the publish: its counts include them`,
        );
        check(
          stack,
          'published-contents-match-vault',
          (await contentsMatch(stack, vols[0]!)) && (await contentsMatch(stack, vols[vols.length - 1]!)),
          'a published volume differs from the secrets in OpenBao',
        );
        check(
          stack,
          'one-provider-mount-per-publish',
          publishRow.providerMountCalls === n,
          `${publishRow.providerMountCalls} provider Mount calls for ${n} publishes`,
        );

        progress(`waiting for the driver's first rotation round (every ${POLL_INTERVAL_MS / 1000} s)`);
        await nextRound(driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal }).round;
        const apiBefore = metricSum(await scrape(driverMetricsPort), 'rest_client_requests_total');
        pauser.pause();
        const deadline =
          pauser.stoppedAt + Math.max(POLL_INTERVAL_MS * (1 + JITTER_FRACTION), READ_CACHE_WINDOW_MS) + HOLD_MARGIN_MS;
        progress(
          `driver paused after a round; holding ${((deadline - Date.now()) / 1000).toFixed(1)} s so all ${n} are due, then measuring one round`,
        );
        await holdUntil(deadline, interrupt.signal);
        const heldMs = Date.now() - pauser.stoppedAt;
        const roundBefore = await snapshot(stack, driver);
        const waiter = nextRound(driver, { timeoutMs: ROUND_TIMEOUT_MS, signal: interrupt.signal });
        pauser.resume();
        const round = await waiter.round;
        pauser.pause();
        const roundRow = {
          ...(await row(stack, driver, roundBefore, {
            id: 'rotation-round',
            label: `one rotation round over ${n} pods`,
            pods: n,
            wallMs: round.durationMs,
          })),
          round,
        };
        pauser.resume(); // the driver must answer the metrics scrape
        const driverApiRequests = metricSum(await scrape(driverMetricsPort), 'rest_client_requests_total') - apiBefore;
        check(
          stack,
          'round-covers-all-volumes',
          round.volumes === n && round.refreshed === n,
          `round listed ${round.volumes} and refreshed ${round.refreshed} of ${n}`,
        );
        check(stack, 'round-without-failures', round.failed === 0, `${round.failed} refreshes failed`);
        check(
          stack,
          'unchanged-round-changes-nothing',
          round.changed === 0,
          `${round.changed} volumes changed although no secret did`,
        );
        check(
          stack,
          'one-provider-mount-per-refresh',
          roundRow.providerMountCalls === n,
          `${roundRow.providerMountCalls} provider Mount calls for ${n} refreshes`,
        );
        return { rows: [publishRow, { ...roundRow, driverApiRequests }], heldMs };
      } finally {
        offRounds();
        pauser.resume(); // never leave a stopped process behind: it would not even see SIGTERM
      }
    },
  );
}

async function main(): Promise<void> {
  const skip = unavailable();
  if (skip) {
    progress(`skipped: ${skip}`);
    return;
  }
  const n = podCount();
  const run = await startBenchRun('vault-load', REPO_DIR);
  const cpuProfDir = process.env['BENCH_CPU_PROF'] || undefined;
  const { mode: mountMode, reason: mountModeReason } = chooseMountMode();
  const work = await mkdtemp(join(tmpdir(), 'ssc-bench-vault-'));
  interrupt.listen();
  const checks: Record<string, boolean> = {};
  const secrets = benchSecrets(OBJECTS, OBJECT_SIZE);
  let kube: BenchCluster | undefined;
  let bao: OpenBao | undefined;
  let provider: BenchProcess | undefined;
  let measured: Awaited<ReturnType<typeof measure>>;
  let baoVersion: string;
  try {
    progress(`working in ${work}, mount mode ${mountMode} (${mountModeReason}); starting etcd and kube-apiserver`);
    kube = await startBenchClusterWith({
      spcName: 'bench-vault',
      classSpec: vaultClassSpec(secrets),
      tokenAudiences: [VAULT_AUDIENCE],
      serviceAccounts: [WORKLOAD_SERVICE_ACCOUNT, REVIEWER_SERVICE_ACCOUNT],
    });
    progress('starting OpenBao (dev server, file audit device) with Kubernetes auth against that kube-apiserver');
    bao = await startOpenBao({ auditLog: true });
    if (!bao.auditLogPath) throw new Error('OpenBao started without its audit log');
    baoVersion = await openBaoVersion(bao.address);
    await configureVault(bao, kube.cluster, kube.namespace, secrets);
    await mkdir(join(work, 'providers'), { recursive: true });
    if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
    provider = await startVaultProvider(work, bao.address, cpuProfDir, ['--health-addr=127.0.0.1:0']);
    measured = await measure(
      {
        work,
        audit: new VaultAudit(bao.auditLogPath),
        kube,
        bao,
        provider,
        providerMetricsPort: loggedPort(provider, 'healthPort'),
        secrets,
        checks,
      },
      n,
      mountMode,
      cpuProfDir,
    );
    if (!provider.running) throw new Error(`the vault provider exited:\n${provider.stderrTail()}`);
  } finally {
    await provider?.stop().catch(() => undefined);
    await bao?.stop().catch(() => undefined);
    await kube?.stop().catch(() => undefined);
    await removeWorkDir(work, progress);
    interrupt.release();
  }

  const results: VaultLoadResults = {
    ...run.finish(),
    mountMode,
    mountModeReason,
    config: {
      pods: n,
      objectsPerPod: OBJECTS,
      objectSizeBytes: OBJECT_SIZE,
      serviceAccounts: 1,
      classes: 1,
      openBao: baoVersion,
      auth: `kubernetes auth (TokenReview against the benchmark's kube-apiserver), one role, login TTL ${LOGIN_TTL}`,
      tokens: `publish: one TokenRequest per pod (audience ${VAULT_AUDIENCE}, bound to the pod) passed like kubelet; rotation: the driver mints them from the CSIDriver's tokenRequests`,
      driverFlags: [...ROTATION_FLAGS, '--kubeconfig=<cluster>'],
      publishConcurrency: PUBLISH_CONCURRENCY,
      nodeFlags: benchNodeFlags(),
      measuredRound:
        "the first round after the driver was paused (SIGSTOP) right after a round and resumed once every volume was due and the provider's default read-cache window had passed",
      heldMs: measured.heldMs,
      assumedReadCacheWindowMs: READ_CACHE_WINDOW_MS,
      vaultTraffic: "request lines of OpenBao's file audit device written during the stretch, by path and operation",
      naive:
        "one login per pod and one read per pod and object (HashiCorp's vault-csi-provider: a client and a login per Mount)",
      cpuProfileDir: cpuProfDir ?? null,
    },
    rows: measured.rows,
    targets: vaultLoadTargets(measured.rows, OBJECTS, READ_CACHE_WINDOW_MS),
    checks,
  };
  const files = await writeBenchResults(RESULTS_DIR, 'vault-load', results, !cpuProfDir && usesImageNodeFlags());
  process.stdout.write(`${formatVaultLoadReport(results)}\n`);
  progress(`wrote ${files.join(' and ')}`);
}

runBench('vault-load', main);
