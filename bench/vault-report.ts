import { machineLine, nodeFlagsText, table, type BenchRunHeader } from './report.js';
import type { RoundReport } from './rounds.js';
import type { VaultLoadTraffic } from './vault-traffic.js';

/** One measured stretch of the Vault-load benchmark: the initial publish, or one rotation round. */
export interface VaultLoadRow {
  readonly id: 'initial-publish' | 'rotation-round';
  readonly label: string;
  readonly pods: number;
  /** Requests OpenBao's audit log recorded during the stretch. */
  readonly vault: VaultLoadTraffic;
  /** One login per pod and one read per pod and object: HashiCorp's provider (a client and a login per Mount). */
  readonly naive: { readonly logins: number; readonly reads: number; readonly total: number };
  /** Publish: from the first NodePublishVolume call to the last answer; round: the driver's `durationMs`. */
  readonly wallMs: number;
  /** CPU time (user + system, all threads) of the driver and the vault provider over the stretch. */
  readonly driverCpuMs: number;
  readonly providerCpuMs: number;
  /** The vault provider's VmRSS and VmHWM right after the stretch. */
  readonly providerRssMiB: number;
  readonly providerPeakMiB: number;
  /** Delta of the provider's provider_mount_total. */
  readonly providerMountCalls: number;
  /** Rotation round only: the reconciler's log line, and the driver's Kubernetes API requests (token minting). */
  readonly round?: RoundReport;
  readonly driverApiRequests?: number;
}

/** A goal of the vault load benchmark (bench/README.md), per stretch; benchmarks report, they do not fail. */
export interface VaultLoadTarget {
  readonly id: string;
  readonly description: string;
  readonly value: number;
  readonly limit: number;
  readonly status: 'ok' | 'MISSED';
}

/**
 * The goals for each row: one login per identity per token lifetime (one identity, and
 * every stretch is far shorter than the login TTL), and one read per object per read-cache
 * window the stretch spans (a stretch of 1.2 windows may read twice).
 */
export function vaultLoadTargets(
  rows: readonly VaultLoadRow[],
  objects: number,
  readWindowMs: number,
): VaultLoadTarget[] {
  return rows.flatMap((row) => {
    const readLimit = objects * Math.max(1, Math.ceil(row.wallMs / readWindowMs));
    return [
      {
        id: `${row.id}-logins`,
        description: `${row.label}: logins ≤ 1 (one identity)`,
        value: row.vault.logins,
        limit: 1,
      },
      {
        id: `${row.id}-reads`,
        description: `${row.label}: KV reads ≤ ${readLimit} (${objects} objects × windows spanned)`,
        value: row.vault.reads,
        limit: readLimit,
      },
    ].map((t) => ({ ...t, status: t.value <= t.limit ? ('ok' as const) : ('MISSED' as const) }));
  });
}

/** bench/results/vault-load-*.json. */
export interface VaultLoadResults extends BenchRunHeader<'vault-load'> {
  readonly mountMode: 'tmpfs' | 'dir';
  readonly mountModeReason: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly rows: readonly VaultLoadRow[];
  readonly targets: readonly VaultLoadTarget[];
  readonly checks: Readonly<Record<string, boolean>>;
}

const measuredVsNaive = (measured: number, naive: number): string => `${measured} / ${naive}`;

/** The table printed to stdout: measured Vault requests next to the naive count, per row. */
export function formatVaultLoadReport(r: VaultLoadResults): string {
  const head = [
    `secrets-store-csi Vault-load benchmark  ${r.startedAt}`,
    machineLine(r),
    `${String(r.config['pods'])} pods, one ServiceAccount, one class of ${String(r.config['objectsPerPod'])} KV v2 objects; OpenBao ${String(r.config['openBao'])}, ${String(r.config['auth'])}; mount mode ${r.mountMode}; node flags: ${nodeFlagsText(r.config['nodeFlags'])}`,
    ...(r.config['cpuProfileDir']
      ? [
          `CPU profiling on (${String(r.config['cpuProfileDir'])}): timings are inflated, vault-load-latest.json is not updated`,
        ]
      : []),
    '',
  ];
  const rows = table(
    [
      'stretch',
      'logins / naive',
      'KV reads / naive',
      'mount lookups',
      'other',
      'Vault requests / naive',
      'wall ms',
      'CPU ms driver/provider',
      'provider RSS MiB',
    ],
    r.rows.map((row) => [
      row.label,
      measuredVsNaive(row.vault.logins, row.naive.logins),
      measuredVsNaive(row.vault.reads, row.naive.reads),
      String(row.vault.mountLookups),
      String(row.vault.other),
      measuredVsNaive(row.vault.total, row.naive.total),
      String(row.wallMs),
      `${row.driverCpuMs}/${row.providerCpuMs}`,
      row.providerRssMiB.toFixed(1),
    ]),
    new Set([1, 2, 3, 4, 5, 6, 7, 8]),
  );
  const failedChecks = Object.entries(r.checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  return [
    ...head,
    rows,
    '',
    `targets: ${r.targets.map((t) => `${t.description}: ${t.value} ${t.status}`).join('; ')}`,
    failedChecks.length
      ? `CHECKS FAILED: ${failedChecks.join(', ')}`
      : `checks: ${Object.keys(r.checks).join(', ')} passed`,
  ].join('\n');
}
