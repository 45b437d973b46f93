import type { FlagSpec, ParsedFlags } from '../lib/flags.js';
import type { LogLevel } from '../lib/logging/logger.js';

// The flags upstream's driver v1.6.1 takes beyond the ones we share with it, so that its
// DaemonSet args and Helm chart start ours unchanged: main.go's own (-version,
// --log-format-json, pprof, provider health checks), --metrics-backend (pkg/metrics) and
// klog's set (klog.InitFlags in main.go, klog v2.140.0 in v1.6.1). test/integration/upstream-flags
// checks this table against the list read from upstream's module. Where a flag's meaning
// carries over it is honoured; the rest are accepted and ignored with one warning each.

const ignored = (help: string, type: FlagSpec['type'] = 'string'): FlagSpec => ({ type, ignored: true, help });

/** Upstream-only flags, for DRIVER_FLAGS. */
export const UPSTREAM_COMPAT_FLAGS: Readonly<Record<string, FlagSpec>> = Object.freeze({
  version: { type: 'boolean', help: 'print the version as upstream does ({"BuildVersion":…}) and exit' },
  v: {
    type: 'string',
    help: 'klog verbosity, an integer: 4 or more selects --log-level=debug unless --log-level is given',
  },
  'log-format-json': {
    type: 'boolean',
    help: "upstream's JSON log format: logs are always JSON (false is ignored with a warning)",
  },
  'metrics-backend': {
    type: 'string',
    default: 'Prometheus',
    help: 'metrics backend: Prometheus (any case) is the only one, as upstream',
  },
  'provider-health-check': ignored('upstream flag, ignored: there is no background provider health check', 'boolean'),
  'provider-health-check-interval': ignored('upstream flag, ignored'),
  'enable-pprof': ignored('upstream flag, ignored (Go profiling)', 'boolean'),
  'pprof-port': ignored('upstream flag, ignored (Go profiling)'),
  // klog's flags other than -v: where logs go and how they look. Ours are JSON lines on stderr.
  vmodule: ignored('klog flag, ignored'),
  logtostderr: ignored('klog flag, ignored (logs always go to stderr)', 'boolean'),
  alsologtostderr: ignored('klog flag, ignored', 'boolean'),
  stderrthreshold: ignored('klog flag, ignored'),
  // New in klog v2.140.0 (upstream v1.6.1).
  alsologtostderrthreshold: ignored('klog flag, ignored'),
  legacy_stderr_threshold_behavior: ignored('klog flag, ignored', 'boolean'),
  add_dir_header: ignored('klog flag, ignored', 'boolean'),
  skip_headers: ignored('klog flag, ignored', 'boolean'),
  skip_log_headers: ignored('klog flag, ignored', 'boolean'),
  log_dir: ignored('klog flag, ignored (no log files)'),
  log_file: ignored('klog flag, ignored (no log files)'),
  log_file_max_size: ignored('klog flag, ignored (no log files)'),
  one_output: ignored('klog flag, ignored', 'boolean'),
  log_backtrace_at: ignored('klog flag, ignored'),
});

/** What the upstream flags given change in our configuration. */
export interface UpstreamFlagEffects {
  /** The log level -v selects, when --log-level was not given. */
  readonly logLevel?: LogLevel;
  /** Upstream flags given that change nothing here, each once: one warning each at start. */
  readonly ignoredFlags: readonly string[];
}

/** Verbosity from which -v selects debug logs (upstream logs requests and responses at 5, write decisions at 4). */
export const DEBUG_VERBOSITY = 4;

/**
 * Reads the upstream-only flags of a parsed driver command line. Throws, naming the flag,
 * where upstream would refuse to start: -v that is not a 32-bit integer, a metrics
 * backend other than Prometheus.
 */
export function upstreamFlagEffects(flags: ParsedFlags): UpstreamFlagEffects {
  const ignoredFlags = [...flags.ignoredGiven];
  if (flags.values['log-format-json'] === false) ignoredFlags.push('log-format-json');
  const backend = flags.values['metrics-backend'];
  if (typeof backend === 'string' && backend.toLowerCase() !== 'prometheus') {
    throw new Error(`--metrics-backend: unsupported metrics backend "${backend}" (only Prometheus, as upstream)`);
  }
  const v = flags.values['v'];
  if (typeof v !== 'string') return { ignoredFlags };
  // klog's Level.Set: strconv.ParseInt(value, 10, 32).
  const level = /^[+-]?\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(level) || level < -(2 ** 31) || level >= 2 ** 31)
    throw new Error(`-v must be an integer (klog verbosity), got "${v}"`);
  return {
    ignoredFlags,
    ...(level >= DEBUG_VERBOSITY && !flags.given.has('log-level') ? { logLevel: 'debug' as const } : {}),
  };
}

/**
 * What `driver -version` prints: upstream's JSON shape (pkg/version PrintVersion), with
 * our version as BuildVersion.
 */
export function upstreamVersionLine(version: string): string {
  return `${JSON.stringify({ BuildVersion: version, GitCommit: '', BuildDate: '' })}\n`;
}
