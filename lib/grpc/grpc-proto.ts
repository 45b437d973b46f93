import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as CsiProto } from '../../proto/gen/csi.js';
import type { ProtoGrpcType as ProviderProto } from '../../proto/gen/service.js';

/**
 * The conversions of every loaded message, the same as scripts/gen-proto.mjs passes to
 * proto-loader-gen-types, so decoded objects have the generated `__Output` types: field
 * names as in the .proto, 64-bit integers as numbers, enums by name, absent scalars as
 * their defaults and absent messages as null, a oneof's member name in its own field.
 */
export const PROTO_CONVERSION: Readonly<protoLoader.Options> = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

/**
 * The folder holding the .proto files: `proto/` at the package root, next to `dist/`
 * where this module runs from (dist/lib/grpc/), in the images too (/app/proto).
 */
export function protoDir(): string {
  const dir = fileURLToPath(new URL('../../../proto/', import.meta.url));
  if (!existsSync(`${dir}provider/service.proto`)) {
    throw new Error(
      `the .proto files are missing: expected ${dir}csi/csi.proto and ${dir}provider/service.proto next to dist/`,
    );
  }
  return dir;
}

function load(file: string): grpc.GrpcObject {
  return grpc.loadPackageDefinition(protoLoader.loadSync(file, { ...PROTO_CONVERSION, includeDirs: [protoDir()] }));
}

let csi: CsiProto | undefined;
let provider: ProviderProto | undefined;

/** The CSI `csi.v1` package (Identity, Node and the Controller subset), loaded once per process. */
export function csiProto(): CsiProto['csi']['v1'] {
  csi ??= load('csi/csi.proto') as unknown as CsiProto;
  return csi.csi.v1;
}

/** The provider `v1alpha1` package (the CSIDriverProvider service), loaded once per process. */
export function providerProto(): ProviderProto['v1alpha1'] {
  provider ??= load('provider/service.proto') as unknown as ProviderProto;
  return provider.v1alpha1;
}
