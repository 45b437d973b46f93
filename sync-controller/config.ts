import { parseDurationFlag } from '../lib/duration.js';
import { booleanFlag, parseFlags, parseWholeNumberFlag, stringFlag, type FlagSpec } from '../lib/flags.js';
import { parseLogLevel, type LogLevel } from '../lib/logging/logger.js';

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
    help: 'leader election by Lease: not implemented yet, refused when true (run one replica)',
  },
  'leader-election-namespace': { type: 'string', default: '', help: 'namespace of the leader election Lease' },
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
  if (booleanFlag(flags, 'leader-elect'))
    throw new Error('--leader-elect is not implemented yet: run a single replica without it');
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
  });
}
