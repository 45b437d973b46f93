// Flags of the exec provider (docs/providers/exec.md), parsed once at start.
import { parseDurationFlag } from '../../lib/duration.js';
import { parseWholeNumberFlag, stringFlag, type FlagSpec, type ParsedFlags } from '../../lib/flags.js';

/** Default of --helper-timeout. */
export const DEFAULT_HELPER_TIMEOUT = '10s';
/** Default of --max-output-bytes: 1 MiB per helper call. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Default of --max-concurrent-helpers. */
export const DEFAULT_MAX_CONCURRENT_HELPERS = 8;

/** Flags of the exec provider (on top of the framework's common ones). */
export const execProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'helpers-dir': {
    type: 'string',
    default: '',
    help: 'directory holding the helper executables a class may name (required); nothing outside it runs',
  },
  'helper-timeout': {
    type: 'string',
    default: DEFAULT_HELPER_TIMEOUT,
    help: "longest one helper call may run (Go duration, 100ms to 10m); less when the Mount's deadline is nearer",
  },
  'max-output-bytes': {
    type: 'string',
    default: String(DEFAULT_MAX_OUTPUT_BYTES),
    help: 'most bytes a helper call may print on stdout (1 to 67108864); more fails the Mount',
  },
  'max-concurrent-helpers': {
    type: 'string',
    default: String(DEFAULT_MAX_CONCURRENT_HELPERS),
    help: 'most helper processes running at once, over all Mounts (1 to 1024)',
  },
  'hmac-key-file': {
    type: 'string',
    default: '',
    help: 'file holding the key that makes versions of helpers without a version subcommand (created if missing); without it those versions change on restart',
  },
};

/** The provider's settings. */
export interface ExecSettings {
  readonly helpersDir: string;
  readonly helperTimeoutMs: number;
  readonly maxOutputBytes: number;
  readonly maxConcurrentHelpers: number;
  readonly hmacKeyFile: string;
}

/** Settings from parsed flags; throws an Error naming the flag on a bad value. */
export function execSettings(flags: ParsedFlags): ExecSettings {
  const helpersDir = stringFlag(flags, 'helpers-dir');
  if (helpersDir === '') throw new Error('--helpers-dir is required: the directory holding the helper executables');
  return Object.freeze({
    helpersDir,
    helperTimeoutMs: parseDurationFlag('helper-timeout', stringFlag(flags, 'helper-timeout'), {
      example: '10s',
      min: [100, '100ms'],
      max: [600_000, '10m'],
    }),
    maxOutputBytes: parseWholeNumberFlag(
      'max-output-bytes',
      stringFlag(flags, 'max-output-bytes'),
      1,
      64 * 1024 * 1024,
    ),
    maxConcurrentHelpers: parseWholeNumberFlag(
      'max-concurrent-helpers',
      stringFlag(flags, 'max-concurrent-helpers'),
      1,
      1024,
    ),
    hmacKeyFile: stringFlag(flags, 'hmac-key-file'),
  });
}
