import * as grpc from '@grpc/grpc-js';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

// grpc-js servers that tests and benchmarks run as peers of the driver (scripted
// providers, a bulk provider), with the services of proto/runtime/grpc-proto.ts.

/** Binds a grpc-js server (a peer in tests and benchmarks) to a Unix socket, replacing a stale socket file. */
export async function bindGrpcJsServer(server: grpc.Server, socketPath: string): Promise<void> {
  await mkdir(dirname(socketPath), { recursive: true });
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
}

/** Stops a grpc-js server: gracefully, forced after `graceMs`. */
export async function shutdownGrpcJsServer(server: grpc.Server, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, graceMs);
    timer.unref();
    server.tryShutdown(() => { clearTimeout(timer); resolve(); });
  });
}
