import { connect } from 'node:net';
import { formatGoDuration } from '../lib/duration.js';

/**
 * Connect errors that mean "no driver there yet": the socket file does not exist (the
 * driver is still starting) or exists with nobody accepting (a stale
 * file of a stopped driver, which the next driver replaces). Anything else (EACCES,
 * ENOTSOCK, ENOTDIR, …) will not go away by waiting.
 */
const NOT_YET = new Set(['ENOENT', 'ECONNREFUSED', 'EAGAIN']);

/** Whether a failed connect to the driver's socket is worth retrying. */
export function isNotYetListening(code: string): boolean {
  return NOT_YET.has(code);
}

/** The CLI gave up reaching the driver; exit code 2 like a failed CSI call. */
export class DriverUnreachableError extends Error {
  readonly exitCode = 2;
}

/** What waitForSocket needs from the world (real sockets and time, or fakes in unit tests). */
export interface SocketWaitPorts {
  /** Connects once and disconnects: undefined when it worked, else the errno code. */
  tryConnect(socketPath: string): Promise<string | undefined>;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Told once, when the first attempt fails and the wait begins. */
  onWaiting(message: string): void;
}

/** How often the socket is tried while waiting: short next to a driver's start (~0.3 s). */
export const SOCKET_POLL_MS = 100;

/** The message for a socket nobody listens on, the same whether or not the CLI waited. */
export function noDriverMessage(socketPath: string, code: string, waitedMs: number): string {
  return `no driver listening at unix://${socketPath} (connect ${code}${waitedMs > 0 ? `, waited ${formatGoDuration(waitedMs)}` : ''})`;
}

/**
 * Resolves once something accepts connections on `socketPath`, trying every
 * SOCKET_POLL_MS for up to `timeoutMs`. A driver started in the background a moment ago
 * has not bound its socket yet; kubelet likewise waits for a driver to register before
 * calling it.
 */
export async function waitForSocket(socketPath: string, timeoutMs: number, ports: SocketWaitPorts): Promise<void> {
  const deadline = ports.now() + timeoutMs;
  let told = false;
  for (;;) {
    const code = await ports.tryConnect(socketPath);
    if (code === undefined) return;
    if (!isNotYetListening(code))
      throw new DriverUnreachableError(`cannot connect to the driver at unix://${socketPath}: connect ${code}`);
    const left = deadline - ports.now();
    if (left <= 0) throw new DriverUnreachableError(noDriverMessage(socketPath, code, timeoutMs));
    if (!told) {
      told = true;
      ports.onWaiting(
        `waiting up to ${formatGoDuration(timeoutMs)} for a driver at unix://${socketPath} (connect ${code})`,
      );
    }
    await ports.sleep(Math.min(SOCKET_POLL_MS, left));
  }
}

/** One real connect attempt on a Unix socket, closed at once. */
export function tryConnectUnix(socketPath: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ path: socketPath });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      resolve(err.code ?? 'EIO');
    });
  });
}

/** The real ports: sockets, the wall clock, timers, and a line on stderr. */
export function realSocketWaitPorts(): SocketWaitPorts {
  return {
    tryConnect: tryConnectUnix,
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    onWaiting: (message) => process.stderr.write(`secrets-store-csi: ${message}\n`),
  };
}
