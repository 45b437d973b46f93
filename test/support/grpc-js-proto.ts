import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as CsiProto } from '../../proto/gen/csi.js';
import type { ProtoGrpcType as ProviderProto } from '../../proto/gen/service.js';

// grpc-js with protobufjs (proto-loader): the independent gRPC implementation our tests
// and benchmarks use as a peer (clients of the driver, scripted providers, the protobuf
// oracle of proto/wire). The driver and providers themselves run on proto/grpc + proto/wire.

/** Options matching scripts/gen-proto.mjs so runtime objects have the generated types. */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The folder holding the .proto sources (works from test/support and dist/test/support). */
function protoDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes('/dist/') ? fileURLToPath(new URL('../../../proto/', import.meta.url))
    : fileURLToPath(new URL('../../proto/', import.meta.url));
}

let csi: CsiProto | undefined;
let provider: ProviderProto | undefined;

/** The CSI `csi.v1` package (Identity and Node services), loaded once. */
export function loadCsiProto(): CsiProto {
  csi ??= grpc.loadPackageDefinition(
    protoLoader.loadSync('csi/csi.proto', { ...LOADER_OPTIONS, includeDirs: [protoDir()] }),
  ) as unknown as CsiProto;
  return csi;
}

/** The provider `v1alpha1` package (CSIDriverProvider service), loaded once. */
export function loadProviderProto(): ProviderProto {
  provider ??= grpc.loadPackageDefinition(
    protoLoader.loadSync('provider/service.proto', { ...LOADER_OPTIONS, includeDirs: [protoDir()] }),
  ) as unknown as ProviderProto;
  return provider;
}

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
