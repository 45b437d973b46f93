import { parseDurationFlag } from '../lib/duration.js';
import { booleanFlag, parseFlags, stringFlag, type FlagSpec } from '../lib/flags.js';
import { parseLogLevel, type LogLevel } from '../lib/logging/logger.js';
import { socketPathFromEndpoint } from '../lib/grpc/unix-socket.js';
import { UPSTREAM_COMPAT_FLAGS, upstreamFlagEffects } from './upstream-flags.js';

/** How the driver puts a volume in place at the target path. */
export type MountMode = 'tmpfs' | 'dir';

/**
 * How rotation refreshes mounted volumes (docs/rotation.md): the driver's own reconciler
 * loop (needs token-request rights), kubelet's requiresRepublish calls (upstream's RBAC),
 * or `auto` (the default): the reconciler unless its rights are missing, checked at start.
 */
export type RotationMode = 'auto' | 'reconciler' | 'republish';

/** The driver's configuration, parsed once from flags and environment, then frozen. */
export interface DriverConfig {
  readonly socketPath: string;
  readonly nodeId: string;
  readonly driverName: string;
  /** Provider socket directories in search order. */
  readonly providerDirs: readonly string[];
  readonly maxCallRecvMsgSize: number;
  /** Most object versions one Mount response may carry (each becomes a `.metadata` file). */
  readonly maxObjectsPerVolume: number;
  readonly metricsAddr: string;
  readonly enableSecretRotation: boolean;
  readonly rotationPollIntervalMs: number;
  readonly rotationMode: RotationMode;
  /** Least time between two restarts of one workload by restart-on-rotation (restart loops). */
  readonly workloadRestartMinIntervalMs: number;
  readonly spcDir: string;
  /** Kubernetes mode: path of a kubeconfig ("" = in-cluster or the default kubeconfig). */
  readonly kubeconfig: string;
  /** On by default, as upstream: a class with secretObjects is synced. */
  readonly enableSecretSync: boolean;
  /** Kubernetes mode: how often synced Secrets of mounted volumes are checked and re-created. */
  readonly secretResyncIntervalMs: number;
  readonly mountMode: MountMode;
  readonly providerTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** Upstream flags that were given and are ignored (logged once at start). */
  readonly ignoredFlags: readonly string[];
}

/** Every flag of `secrets-store-csi driver`; docs/configuration.md documents the same table. */
export const DRIVER_FLAGS: Readonly<Record<string, FlagSpec>> = Object.freeze({
  endpoint: { type: 'string', default: 'unix:///csi/csi.sock', help: 'CSI endpoint (unix socket) kubelet connects to' },
  nodeid: { type: 'string', default: '', help: 'node name reported by NodeGetInfo (default: $KUBE_NODE_NAME)' },
  drivername: { type: 'string', default: 'secrets-store.csi.k8s.io', help: 'CSI driver name' },
  'provider-volume': {
    type: 'string',
    default: '/var/run/secrets-store-csi-providers',
    help: 'directory holding provider sockets <provider>.sock',
  },
  'additional-provider-volume-paths': {
    type: 'string',
    default: '/etc/kubernetes/secrets-store-csi-providers',
    help: 'comma-separated directories searched for provider sockets before --provider-volume',
  },
  'max-call-recv-msg-size': {
    type: 'string',
    default: String(4 * 1024 * 1024),
    help: 'largest provider Mount response accepted, in bytes',
  },
  'max-objects-per-volume': {
    type: 'string',
    default: '10000',
    help: 'most objects (object versions) one Mount response may carry',
  },
  'metrics-addr': {
    type: 'string',
    default: ':8095',
    help: 'address of the HTTP server for /metrics and /healthz ("" disables it)',
  },
  'enable-secret-rotation': {
    type: 'boolean',
    default: false,
    help: 'run the rotation reconciler: re-fetch mounted secrets every --rotation-poll-interval (docs/rotation.md)',
  },
  'rotation-poll-interval': {
    type: 'string',
    default: '2m',
    help: 'rotation interval as a Go duration (e.g. 2m, 1h30m); minimum 1s',
  },
  'rotation-mode': {
    type: 'string',
    default: 'auto',
    help:
      "auto (reconciler when the driver's RBAC grants its rights, else republish; checked at " +
      'start), reconciler (the driver refreshes volumes itself, needs deploy/rbac-rotation.yaml) ' +
      "or republish (refresh on kubelet's requiresRepublish calls, upstream's RBAC)",
  },
  'workload-restart-min-interval': {
    type: 'string',
    default: '10m',
    help: 'least time between two restarts of one workload by restart-on-rotation, as a Go duration; minimum 1s (docs/rotation.md)',
  },
  'spc-dir': {
    type: 'string',
    default: '',
    help: 'local mode: read SecretProviderClass YAML files from this directory instead of the Kubernetes API',
  },
  kubeconfig: {
    type: 'string',
    default: '',
    help: 'kubeconfig file (default: in-cluster service account, else $KUBECONFIG or ~/.kube/config); ignored in local mode',
  },
  'enable-secret-sync': {
    type: 'boolean',
    default: true,
    help: 'create and update Kubernetes Secrets from secretObjects (needs the secret-sync RBAC role); --enable-secret-sync=false turns it off',
  },
  'secret-resync-interval': {
    type: 'string',
    default: '5m',
    help:
      'how often synced Secrets of mounted volumes are checked and re-created from the mounted ' +
      'files, as a Go duration; minimum 1s (with rotation: at most --rotation-poll-interval)',
  },
  'mount-mode': {
    type: 'string',
    default: 'tmpfs',
    help: 'tmpfs (mount a tmpfs at each target path) or dir (plain directory; local mode only)',
  },
  'provider-timeout': {
    type: 'string',
    default: '30s',
    help: 'deadline of each provider call as a Go duration; shortened to the kubelet deadline when that is sooner',
  },
  'log-level': {
    type: 'string',
    default: 'info',
    help: "error, warn, info or debug (without it, upstream's -v=4 or more selects debug)",
  },
  // So that upstream v1.6's DaemonSet args and Helm chart start unchanged; see docs/configuration.md.
  ...UPSTREAM_COMPAT_FLAGS,
});

const MIN_ROTATION_MS = 1000;

function positiveInteger(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
  return n;
}

function duration(name: string, raw: string, minMs: number): number {
  return parseDurationFlag(name, raw, { example: '2m or 1h30m', positive: true, min: [minMs, `${minMs / 1000}s`] });
}

/**
 * Whether the command line asks for the version (`-version`, `--version=true`, …), as
 * upstream checks it: after parsing every flag (an unknown one throws), before anything
 * else is required.
 */
export function versionRequested(argv: readonly string[]): boolean {
  return booleanFlag(parseFlags(argv, DRIVER_FLAGS), 'version');
}

/** Parses driver flags and environment into a frozen DriverConfig; throws with a message naming the flag. */
export function parseDriverConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): DriverConfig {
  const flags = parseFlags(argv, DRIVER_FLAGS);
  const upstream = upstreamFlagEffects(flags);
  if (flags.positionals.length > 0) throw new Error(`unexpected argument "${flags.positionals[0]}"`);
  const rotationMode = stringFlag(flags, 'rotation-mode');
  if (rotationMode !== 'auto' && rotationMode !== 'reconciler' && rotationMode !== 'republish')
    throw new Error(`--rotation-mode must be auto, reconciler or republish, got "${rotationMode}"`);
  const mountMode = stringFlag(flags, 'mount-mode');
  if (mountMode !== 'tmpfs' && mountMode !== 'dir')
    throw new Error(`--mount-mode must be tmpfs or dir, got "${mountMode}"`);
  const spcDir = stringFlag(flags, 'spc-dir');
  if (mountMode === 'dir' && spcDir === '')
    throw new Error('--mount-mode=dir is for local mode only: set --spc-dir as well');
  const nodeId = stringFlag(flags, 'nodeid') || env['KUBE_NODE_NAME'] || '';
  if (nodeId === '') throw new Error('--nodeid is required (or set KUBE_NODE_NAME)');
  const providerDirs = [
    ...stringFlag(flags, 'additional-provider-volume-paths')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    stringFlag(flags, 'provider-volume'),
  ].filter(Boolean);
  if (providerDirs.length === 0) throw new Error('--provider-volume must not be empty');
  return Object.freeze({
    socketPath: socketPathFromEndpoint(stringFlag(flags, 'endpoint')),
    nodeId,
    driverName: stringFlag(flags, 'drivername') || 'secrets-store.csi.k8s.io',
    providerDirs: Object.freeze(providerDirs),
    maxCallRecvMsgSize: positiveInteger('max-call-recv-msg-size', stringFlag(flags, 'max-call-recv-msg-size')),
    maxObjectsPerVolume: positiveInteger('max-objects-per-volume', stringFlag(flags, 'max-objects-per-volume')),
    metricsAddr: stringFlag(flags, 'metrics-addr'),
    enableSecretRotation: booleanFlag(flags, 'enable-secret-rotation'),
    rotationPollIntervalMs: duration(
      'rotation-poll-interval',
      stringFlag(flags, 'rotation-poll-interval'),
      MIN_ROTATION_MS,
    ),
    rotationMode,
    workloadRestartMinIntervalMs: duration(
      'workload-restart-min-interval',
      stringFlag(flags, 'workload-restart-min-interval'),
      1000,
    ),
    spcDir,
    kubeconfig: stringFlag(flags, 'kubeconfig'),
    enableSecretSync: booleanFlag(flags, 'enable-secret-sync'),
    secretResyncIntervalMs: duration('secret-resync-interval', stringFlag(flags, 'secret-resync-interval'), 1000),
    mountMode,
    providerTimeoutMs: duration('provider-timeout', stringFlag(flags, 'provider-timeout'), 1),
    logLevel: upstream.logLevel ?? parseLogLevel(stringFlag(flags, 'log-level')),
    ignoredFlags: Object.freeze([...upstream.ignoredFlags]),
  });
}
