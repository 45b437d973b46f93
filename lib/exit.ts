/**
 * How long an exit waits for stderr to take the queued log lines. A full pipe (a slow or
 * stuck log reader) must not keep a stopped process alive for long: kubelet waits for
 * the pod's termination grace period (30 s by default) before it kills it anyway.
 */
export const EXIT_DRAIN_MS = 2000;

/**
 * Resolves once everything written to `stream` so far has been handed to the kernel, or
 * after `timeoutMs`. Node writes to a pipe asynchronously once the pipe is full (libuv
 * queues the rest), and process.exit() drops that queue: an exit waits here first.
 */
export function drained(stream: NodeJS.WritableStream & { writableLength?: number }, timeoutMs: number): Promise<void> {
  if (!stream.writableLength) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    // Writes complete in order: this callback runs after every line queued before it.
    stream.write('', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** process.exit(code) once stderr and stdout have taken what was written (at most EXIT_DRAIN_MS). */
export async function exitAfterOutput(code: number, timeoutMs = EXIT_DRAIN_MS): Promise<never> {
  await Promise.all([drained(process.stderr, timeoutMs), drained(process.stdout, timeoutMs)]);
  process.exit(code);
}
