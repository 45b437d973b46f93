import { parseDurationFlag } from '../lib/duration.js';
import {
  booleanFlag,
  parseFlags,
  parseWholeNumberFlag,
  stringFlag,
  type FlagSpec,
  type ParsedFlags,
} from '../lib/flags.js';
import { parseLogLevel, type LogLevel } from '../lib/logging/logger.js';
import { leaseTimingProblem } from '../driver/k8s/lease-record.js';
import { namespaceProblem, objectNameProblem } from '../driver/k8s/resource-paths.js';

/** SSC's Lease name (controller-runtime's LeaderElectionID): SSC and this controller never lead at once. */
export const SSC_LEADER_ELECTION_ID = '29f1d54e.secret-sync.x-k8s.io';

/** Leader election by Lease, when on. */
export interface LeaderElectionSettings {
  /** "" = the namespace of the controller's own pod (its service account's namespace file). */
  readonly namespace: string;
  readonly leaseName: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** The SecretSync controller's configuration, parsed once from flags and environment, then frozen. */
export interface SyncControllerConfig {
  readonly providerDir: string;
  readonly metricsAddr: string;
  readonly healthProbeAddr: string;
  readonly audiences: readonly string[];
  /** 0 = no periodic re-sync. */
  readonly rotationPollIntervalMs: number;
  readonly maxCallRecvMsgSize: number;
  readonly kubeconfig: string;
  /** SecretSyncs reconciled at the same time. */
  readonly concurrency: number;
  readonly providerTimeoutMs: number;
  /** One Mount for SecretSyncs whose Mount requests are identical (shared-mount.ts). */
  readonly shareProviderMounts: boolean;
  /** The controller's own pod (downward API), passed to providers as upstream does. */
  readonly podName: string;
  readonly podUid: string;
  readonly logLevel: LogLevel;
  /** Undefined: no leader election (a single replica). */
  readonly leaderElection: LeaderElectionSettings | undefined;
}

/** Every flag of `secrets-store-csi sync-controller`; docs/secret-sync-controller.md documents the same table. */
export const SYNC_CONTROLLER_FLAGS: Readonly<Record<string, FlagSpec>> = Object.freeze({
  'provider-volume': {
    type: 'string',
    default: '/provider',
    help: 'directory holding provider sockets <provider>.sock',
  },
  'metrics-bind-address': {
    type: 'string',
    default: ':8085',
    help: 'address of the HTTP server for /metrics ("" or "0" disables it)',
  },
  'health-probe-bind-address': {
    type: 'string',
    default: ':8081',
    help: 'address of the HTTP server for /healthz and /readyz ("" or "0" disables it)',
  },
  'leader-elect': {
    type: 'boolean',
    default: false,
    help: 'elect one leader among the replicas by a Lease; only the leader syncs',
  },
  'leader-election-namespace': {
    type: 'string',
    default: '',
    help: 'namespace of the leader election Lease ("" = the controller pod\'s own namespace)',
  },
  'leader-elect-resource-name': {
    type: 'string',
    default: SSC_LEADER_ELECTION_ID,
    help: "name of the leader election Lease (SSC's by default)",
  },
  'leader-elect-lease-duration': {
    type: 'string',
    default: '15s',
    help: 'how long a follower waits after the last renewal it saw before it takes the Lease over',
  },
  'leader-elect-renew-deadline': {
    type: 'string',
    default: '10s',
    help: 'how long the leader tries to renew before it gives leadership up and exits',
  },
  'leader-elect-retry-period': {
    type: 'string',
    default: '2s',
    help: 'how often the leader renews, and a follower tries to acquire',
  },
  'token-request-audience': {
    type: 'string',
    default: '',
    help: 'comma-separated audiences of the service-account tokens passed to providers',
  },
  'rotation-poll-interval': {
    type: 'string',
    default: '12h',
    help: 'how often every SecretSync is re-fetched from its provider, as a Go duration (0 = never)',
  },
  'max-call-recv-msg-size': {
    type: 'string',
    default: String(4 * 1024 * 1024),
    help: 'largest provider Mount response accepted, in bytes',
  },
  kubeconfig: { type: 'string', default: '', help: 'kubeconfig path ("" = in-cluster, or $KUBECONFIG)' },
  'max-concurrent-syncs': { type: 'string', default: '4', help: 'SecretSyncs reconciled at the same time' },
  'provider-timeout': { type: 'string', default: '30s', help: 'deadline of one provider Mount call' },
  'log-level': { type: 'string', default: 'info', help: 'error, warn, info or debug' },
  'share-provider-mounts': {
    type: 'boolean',
    default: true,
    help: 'one provider Mount for SecretSyncs with the same namespace, class, service account and tokens (false: one per SecretSync, as upstream)',
  },
});

/** Audiences from the comma list: trimmed, empties dropped (upstream keeps leading spaces). */
export function parseAudiences(raw: string): string[] {
  return raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
}

/** Parses the controller's flags and environment into a frozen config; throws with a message naming the flag. */
export function parseSyncControllerConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): SyncControllerConfig {
  const flags = parseFlags(argv, SYNC_CONTROLLER_FLAGS);
  if (flags.positionals.length > 0) throw new Error(`unexpected argument "${flags.positionals[0]}"`);
  const providerDir = stringFlag(flags, 'provider-volume');
  if (providerDir === '') throw new Error('--provider-volume must not be empty');
  return Object.freeze({
    providerDir,
    metricsAddr: stringFlag(flags, 'metrics-bind-address'),
    healthProbeAddr: stringFlag(flags, 'health-probe-bind-address'),
    audiences: Object.freeze(parseAudiences(stringFlag(flags, 'token-request-audience'))),
    rotationPollIntervalMs: parseDurationFlag('rotation-poll-interval', stringFlag(flags, 'rotation-poll-interval'), {
      example: '12h or 30m',
      max: [365 * 24 * 3600_000, '8760h'],
    }),
    maxCallRecvMsgSize: parseWholeNumberFlag(
      'max-call-recv-msg-size',
      stringFlag(flags, 'max-call-recv-msg-size'),
      1,
      2 ** 31 - 1,
    ),
    kubeconfig: stringFlag(flags, 'kubeconfig') || env['KUBECONFIG'] || '',
    concurrency: parseWholeNumberFlag('max-concurrent-syncs', stringFlag(flags, 'max-concurrent-syncs'), 1, 1000),
    providerTimeoutMs: parseDurationFlag('provider-timeout', stringFlag(flags, 'provider-timeout'), {
      example: '30s',
      positive: true,
    }),
    shareProviderMounts: booleanFlag(flags, 'share-provider-mounts'),
    podName: env['SYNC_CONTROLLER_POD_NAME'] ?? '',
    podUid: env['SYNC_CONTROLLER_POD_UID'] ?? '',
    logLevel: parseLogLevel(stringFlag(flags, 'log-level')),
    leaderElection: booleanFlag(flags, 'leader-elect') ? leaderElectionSettings(flags) : undefined,
  });
}

function leaderElectionSettings(flags: ParsedFlags): LeaderElectionSettings {
  const duration = (name: string) =>
    parseDurationFlag(name, stringFlag(flags, name), { example: '15s', positive: true, max: [3600_000, '1h'] });
  const leaseDurationMs = duration('leader-elect-lease-duration');
  const renewDeadlineMs = duration('leader-elect-renew-deadline');
  const retryPeriodMs = duration('leader-elect-retry-period');
  const problem = leaseTimingProblem(leaseDurationMs, renewDeadlineMs, retryPeriodMs);
  if (problem) throw new Error(problem);
  const namespace = stringFlag(flags, 'leader-election-namespace');
  const nsProblem = namespace === '' ? undefined : namespaceProblem(namespace);
  if (nsProblem) throw new Error(`--leader-election-namespace ${JSON.stringify(namespace)} ${nsProblem}`);
  const leaseName = stringFlag(flags, 'leader-elect-resource-name');
  const nameProblem = objectNameProblem(leaseName);
  if (nameProblem) throw new Error(`--leader-elect-resource-name ${JSON.stringify(leaseName)} ${nameProblem}`);
  return Object.freeze({ namespace, leaseName, leaseDurationMs, renewDeadlineMs, retryPeriodMs });
}
