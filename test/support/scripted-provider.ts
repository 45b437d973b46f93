// A provider whose Mount answers are scripted per test. It stands in only for
// misbehaviour no real provider can be made to show on demand (bad paths, empty
// versions, oversized or hanging responses); happy paths and wire compatibility are
// tested against the real file provider and upstream's own provider server.
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import type { MountRequest__Output } from '../../proto/gen/v1alpha1/MountRequest.js';
import type { MountResponse } from '../../proto/gen/v1alpha1/MountResponse.js';
import { providerProto } from '../../lib/grpc/grpc-proto.js';
import { bindUnixSocket, shutdownServer } from '../../lib/grpc/unix-socket.js';

/** How the scripted provider answers a Mount: a response, or a gRPC error; `cancelled` aborts when the driver cancels the call. */
export type MountScript = (
  request: MountRequest__Output,
  cancelled: AbortSignal,
) => Promise<MountResponse | grpc.ServiceError>;

/** A scripted provider listening on `<dir>/<name>.sock`. */
export interface ScriptedProvider {
  /** Replace the answer for the next Mount calls. */
  script: MountScript;
  /** Every request received, in order. */
  readonly requests: MountRequest__Output[];
  stop(): Promise<void>;
}

/** A MountResponse with the given files (contents as text) and one version per file. */
export function responseWith(
  files: readonly { path: string; contents?: string; mode?: number }[],
  versions?: readonly { id: string; version: string }[],
): MountResponse {
  return {
    files: files.map((f) => ({ path: f.path, mode: f.mode ?? 0, contents: Buffer.from(f.contents ?? 'x') })),
    object_version: versions ? [...versions] : files.map((f) => ({ id: f.path, version: 'v1' })),
  };
}

/** Starts a scripted provider in this process on a Unix socket. */
export async function startScriptedProvider(dir: string, name: string, script: MountScript): Promise<ScriptedProvider> {
  const server = new grpc.Server();
  const state: ScriptedProvider = {
    script,
    requests: [],
    stop: () => shutdownServer(server, 100),
  };
  server.addService(providerProto().CSIDriverProvider.service, {
    Version: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, { version: 'v1alpha1', runtime_name: 'scripted', runtime_version: '0' }),
    Mount: (call: grpc.ServerUnaryCall<MountRequest__Output, MountResponse>, cb: grpc.sendUnaryData<MountResponse>) => {
      state.requests.push(call.request);
      const cancelled = new AbortController();
      call.once('cancelled', () => cancelled.abort());
      state.script(call.request, cancelled.signal).then(
        (res) => {
          if ('code' in res && typeof res.code === 'number') cb(res as grpc.ServiceError);
          else cb(null, res as MountResponse);
        },
        (err: unknown) => cb({ code: grpc.status.INTERNAL, details: String(err) } as grpc.ServiceError),
      );
    },
  });
  await bindUnixSocket(server, join(dir, `${name}.sock`));
  return state;
}
