/**
 * The V8 flags our long-running processes (the driver and every provider) are started
 * with. One list for every launcher we own: the image ENTRYPOINTs (Dockerfile.driver,
 * Dockerfile.provider; test/repo/deploy-manifests.test.ts keeps them in step), the CLI's
 * shebang, `startCli` (demo and tests) and the benchmarks.
 *
 * They bound the heap: semi-spaces of at most 4 MiB (V8 grows them to 16 MiB under an
 * allocation burst such as a rotation round), and an old generation that grows by 20 %
 * of what is live after a full collection (V8 keeps a minimum step): a busy driver's RSS
 * about a quarter lower for somewhat slower publishes (docs/configuration.md#memory has
 * the measurements and the choices not taken). `--heap-growing-percent` is not allowed in NODE_OPTIONS.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/** A V8 flag's name: what comes before `=`, with `_` spelled `-` (V8 accepts both). */
function flagName(flag: string): string {
  return flag.split('=')[0]!.replace(/_/g, '-');
}

/**
 * The flags of NODE_FLAGS this process was started without: on its command line
 * (`process.execArgv`) or in NODE_OPTIONS (where `--max-semi-space-size` is allowed). A
 * flag given with another value counts as present: that is an operator's own tuning.
 */
export function missingNodeFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].filter(Boolean).map(flagName));
  return NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** Logs a warning when this process runs without NODE_FLAGS (a hand-written command line). */
export function warnMissingNodeFlags(
  logger: { warn(message: string, meta?: Record<string, unknown>): unknown },
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env['NODE_OPTIONS'] ?? '',
): void {
  const missing = missingNodeFlags(execArgv, nodeOptions);
  if (missing.length === 0) return;
  logger.warn(
    'node was started without the flags this program is tuned for: expect more memory use (docs/configuration.md#memory)',
    { missingNodeFlags: missing },
  );
}
