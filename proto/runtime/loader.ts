import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as CsiProto } from '../gen/csi.js';
import type { ProtoGrpcType as ProviderProto } from '../gen/service.js';

/** Options matching scripts/gen-proto.mjs so runtime objects have the generated types. */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The folder holding the .proto sources (works from proto/runtime and dist/proto/runtime). */
function protoDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes('/dist/') ? fileURLToPath(new URL('../../../proto/', import.meta.url))
    : fileURLToPath(new URL('../', import.meta.url));
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
