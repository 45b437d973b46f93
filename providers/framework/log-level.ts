import { booleanFlag, stringFlag, type ParsedFlags } from '../../lib/flags.js';
import { LOG_LEVELS, parseLogLevel, type LogLevel } from '../../lib/logging/logger.js';

/**
 * hclog levels (HashiCorp's providers take them) with no level of their own here: `trace`
 * logs what `debug` logs, `off` keeps only errors (a provider that hides its failures helps
 * no one). Harmless for every provider, so the framework accepts them for all.
 */
const HCLOG_LEVELS: Readonly<Record<string, LogLevel>> = { trace: 'debug', off: 'error' };

/**
 * The provider's log level: --log-level (hclog's `trace` and `off` mapped), else `debug`
 * when a provider that declares HashiCorp's deprecated `--debug` got it, else the default.
 * Throws an Error naming the flag and every accepted value.
 */
export function providerLogLevel(flags: ParsedFlags): LogLevel {
  if (!flags.given.has('log-level') && booleanFlag(flags, 'debug')) return 'debug';
  const value = stringFlag(flags, 'log-level');
  const mapped = HCLOG_LEVELS[value];
  if (mapped !== undefined) return mapped;
  try {
    return parseLogLevel(value);
  } catch {
    throw new Error(
      `--log-level must be one of ${[...LOG_LEVELS, ...Object.keys(HCLOG_LEVELS)].join(', ')}, got "${value}"`,
    );
  }
}
