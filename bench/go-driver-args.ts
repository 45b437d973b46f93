/**
 * How upstream's Go driver v1.6.1 (peer `upstream-driver`) is started next to ours: its
 * command line and the log line that says it serves. Shared by the integration tests'
 * stack (test/support/go-driver.ts) and the side-by-side benchmark (bench/vs-go-driver.ts).
 */

/** The Go driver's stderr line once its CSI socket listens. */
export const GO_DRIVER_READY = /Listening for connections/;

/** What the Go driver's command line is made of. */
export interface GoDriverArgsOptions {
  readonly socketPath: string;
  readonly nodeName: string;
  readonly kubeconfig: string;
  /** Both provider paths point here, so no socket elsewhere on the machine is used. */
  readonly providersDir: string;
  /** Upstream's --enable-secret-rotation with --rotation-poll-interval=1ms: every republish re-mounts. */
  readonly rotation?: boolean;
  /** klog verbosity (-v); upstream's chart default is 0. */
  readonly verbosity?: number;
}

/** The Go driver's flags for `options` (metrics on a free loopback port). */
export function goDriverArgs(options: GoDriverArgsOptions): string[] {
  return [
    `--endpoint=unix://${options.socketPath}`,
    `--nodeid=${options.nodeName}`,
    `--kubeconfig=${options.kubeconfig}`,
    `--provider-volume=${options.providersDir}`,
    `--additional-provider-volume-paths=${options.providersDir}`,
    '--metrics-addr=127.0.0.1:0',
    `-v=${options.verbosity ?? 2}`,
    ...(options.rotation ? ['--enable-secret-rotation', '--rotation-poll-interval=1ms'] : []),
  ];
}
