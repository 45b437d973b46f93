/**
 * The V8 flags our long-running processes (the driver and every provider) are started
 * with. One list for every launcher we own: the image ENTRYPOINTs (Dockerfile.driver,
 * Dockerfile.provider; test/unit/deploy-manifests.test.ts keeps them in step), the CLI's
 * shebang, `startCli` (demo and tests) and the benchmarks.
 *
 * `--optimize-for-size` caps V8's young generation at 1 MiB semi-spaces (16 MiB by
 * default, grown under allocation bursts such as a rotation round) and grows the old
 * generation conservatively. Measured with `npm run bench`: driver RSS with 500 mounted
 * volumes after a rotation round 113 → 77 MiB, idle 70 → 64 MiB; publish latency stays
 * within this machine's run-to-run noise (up to ~10 % slower with 100 objects). A node
 * daemon on every node is better off with the memory. It is not allowed in NODE_OPTIONS,
 * so it has to be on the command line.
 */
export const NODE_FLAGS: readonly string[] = ['--optimize-for-size'];

/** The flags of NODE_FLAGS this process was started without (`process.execArgv`). */
export function missingNodeFlags(execArgv: readonly string[]): string[] {
  return NODE_FLAGS.filter((flag) => !execArgv.includes(flag));
}

/** Logs a warning when this process runs without NODE_FLAGS (a hand-written command line). */
export function warnMissingNodeFlags(logger: { warn(message: string, meta?: Record<string, unknown>): unknown }, execArgv: readonly string[] = process.execArgv): void {
  const missing = missingNodeFlags(execArgv);
  if (missing.length === 0) return;
  logger.warn('node was started without the flags this program is tuned for: expect more memory use (docs/configuration.md#memory)', { missingNodeFlags: missing });
}
