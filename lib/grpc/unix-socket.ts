import * as grpc from '@grpc/grpc-js';
import { mkdir, rm, lstat } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { SscError } from '../errors.js';
import type { InFlightCalls } from './in-flight.js';

/**
 * Parses an endpoint flag value into a socket path. Accepts `unix:///abs/path`,
 * `unix://abs/path` (upstream tolerates it) and a bare absolute path.
 */
export function socketPathFromEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim();
  let path = trimmed;
  if (trimmed.startsWith('unix://')) path = trimmed.slice('unix://'.length);
  else if (trimmed.startsWith('unix:')) path = trimmed.slice('unix:'.length);
  else if (/^[a-z]+:\/\//i.test(trimmed)) {
    throw new SscError('invalid-argument', `endpoint "${endpoint}" must be a unix socket (unix:///path)`);
  }
  if (!path.startsWith('/')) path = '/' + path.replace(/^\/*/, '');
  if (path === '/') throw new SscError('invalid-argument', `endpoint "${endpoint}" has no socket path`);
  return path;
}

/**
 * Whether a process accepts connections on the socket file at `socketPath`: a stale file
 * left by a crashed process refuses them (ECONNREFUSED).
 */
export function socketIsServed(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection({ path: socketPath });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * Binds `server` to a Unix socket and starts serving, removing a stale socket file first
 * (grpc-js does not, and a leftover file from a crashed process would make the bind fail
 * with EADDRINUSE). Refuses to remove anything that is not a socket, and a socket another
 * process is serving on: replacing it would silently take its callers away.
 */
export async function bindUnixSocket(server: grpc.Server, socketPath: string): Promise<void> {
  await mkdir(dirname(socketPath), { recursive: true });
  const existing = await lstat(socketPath).catch(() => undefined);
  if (existing) {
    if (!existing.isSocket()) {
      throw new SscError('failed-precondition', `${socketPath} exists and is not a socket; refusing to replace it`);
    }
    if (await socketIsServed(socketPath)) {
      throw new SscError(
        'failed-precondition',
        `another process is serving on ${socketPath}; refusing to take over its endpoint: stop it first, or give this one another --endpoint`,
      );
    }
    await rm(socketPath, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => {
      if (err) reject(new SscError('unavailable', `cannot listen on ${socketPath}: ${err.message}`));
      else resolve();
    });
  });
}

/**
 * Stops `server`: no new calls; with `calls`, the running ones are cancelled and their
 * handlers' cleanup (a first publish's rollback) awaited, instead of letting them run on
 * until the grace period ends and the process exits under them. Forces shutdown after `graceMs`.
 */
export async function shutdownServer(server: grpc.Server, graceMs: number, calls?: InFlightCalls): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  await calls?.cancelAll(graceMs);
  await closed;
}
