// A small stand-in for the node-driver-registrar sidecar (which the Go module proxy we
// build from refuses to serve): it serves kubelet's plugin registration API v1
// (test/e2e/pluginregistration.proto) on a socket in <root-dir>/plugins_registry/, telling
// kubelet where the driver's CSI socket is. Strict on purpose: one plugin, type CSIPlugin,
// CSI 1.0.0, and kubelet's verdict is kept so a test fails when registration fails.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const PROTO = fileURLToPath(new URL('../../../test/e2e/pluginregistration.proto', import.meta.url));

/** The CSI driver name kubelet registers (our CSIDriver object's and upstream's). */
export const REGISTERED_DRIVER_NAME = 'secrets-store.csi.k8s.io';

/** kubelet's answer to NotifyRegistrationStatus. */
export interface RegistrationVerdict {
  readonly registered: boolean;
  readonly error: string;
}

/** A running registration server. */
export interface PluginRegistration {
  /** Resolves with kubelet's first verdict (registered or not). */
  readonly verdict: Promise<RegistrationVerdict>;
  stop(): Promise<void>;
}

interface RegistrationService {
  pluginregistration: { Registration: grpc.ServiceClientConstructor };
}

/**
 * Serves the Registration service on `socket` for the CSI driver listening on
 * `driverEndpoint` (a socket path).
 */
export async function servePluginRegistration(socket: string, driverEndpoint: string): Promise<PluginRegistration> {
  const pkg = grpc.loadPackageDefinition(
    protoLoader.loadSync(PROTO, { keepCase: true, defaults: true }),
  ) as unknown as RegistrationService;
  let settle!: (v: RegistrationVerdict) => void;
  const verdict = new Promise<RegistrationVerdict>((resolve) => {
    settle = resolve;
  });
  const server = new grpc.Server();
  server.addService(pkg.pluginregistration.Registration.service, {
    GetInfo: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      callback(null, {
        type: 'CSIPlugin',
        name: REGISTERED_DRIVER_NAME,
        endpoint: driverEndpoint,
        supported_versions: ['1.0.0'],
      });
    },
    NotifyRegistrationStatus: (
      call: grpc.ServerUnaryCall<{ plugin_registered: boolean; error: string }, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      settle({ registered: call.request.plugin_registered, error: call.request.error });
      callback(null, {});
    },
  });
  await rm(socket, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return {
    verdict,
    async stop() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await rm(socket, { force: true });
    },
  };
}
