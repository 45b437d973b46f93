/**
 * A provider process for the stall benchmark: answers every Mount with one prebuilt,
 * pre-serialized response of a given shape, as big as the driver accepts (4 MiB):
 *   node bulk-provider.js <socket> nested|tiny
 * `nested`: ~1,000 paths 120 levels deep; `tiny`: ~250,000 one-byte files side by side.
 * Serializing once keeps the provider's own cost out of what the benchmark measures: the
 * driver's event loop while it decodes, validates and writes such a response.
 */
import * as grpc from '@grpc/grpc-js';
import type { MountResponse } from '../proto/gen/v1alpha1/MountResponse.js';
import { providerProto } from '../lib/grpc/grpc-proto.js';
import { bindUnixSocket } from '../lib/grpc/unix-socket.js';

/** The response shapes of the stall benchmark. */
export type BulkShape = 'nested' | 'tiny';

/** Depth of the nested shape's paths (the driver accepts up to 128 levels). */
const NESTED_DEPTH = 120;

/** The response of a shape, just under 4 MiB serialized. */
export function bulkResponse(shape: BulkShape): MountResponse {
  if (shape === 'nested') {
    const files = Array.from({ length: 1000 }, (_, i) => ({
      path: `p${i}/${Array.from({ length: NESTED_DEPTH - 2 }, (_, d) => `d${d}`).join('/')}/f`,
      mode: 0,
      contents: Buffer.alloc(3500, 'n'),
    }));
    return { object_version: [{ id: 'nested', version: '1' }], files };
  }
  const files = Array.from({ length: 250_000 }, (_, i) => ({ path: `f${i}`, mode: 0, contents: Buffer.from('t') }));
  return { object_version: [{ id: 'tiny', version: '1' }], files };
}

async function main(): Promise<void> {
  const [socket, shape] = process.argv.slice(2) as [string, BulkShape];
  const service = providerProto().CSIDriverProvider.service;
  const bytes = service.Mount.responseSerialize(bulkResponse(shape));
  const server = new grpc.Server({ 'grpc.max_send_message_length': 4 * 1024 * 1024 });
  // The same service, with Mount answering the prebuilt bytes as they are.
  server.addService(
    {
      ...service,
      Mount: { ...service.Mount, responseSerialize: (b: Buffer) => b },
    } as unknown as grpc.ServiceDefinition,
    {
      Version: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) =>
        cb(null, { version: 'v1alpha1', runtime_name: 'bulk', runtime_version: '0' }),
      Mount: (_call: grpc.ServerUnaryCall<unknown, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, bytes),
    },
  );
  await bindUnixSocket(server, socket);
  process.stderr.write(`bulk provider started (${shape}, ${bytes.length} bytes)\n`);
  process.on('SIGTERM', () => server.forceShutdown());
}

if (process.argv[1]?.endsWith('bulk-provider.js')) void main();
