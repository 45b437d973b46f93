import type * as grpc from '@grpc/grpc-js';
import type { CSIDriverProviderHandlers } from '../../proto/gen/v1alpha1/CSIDriverProvider.js';
import type { MountResponse } from '../../proto/gen/v1alpha1/MountResponse.js';
import { providerProto } from '../../lib/grpc/grpc-proto.js';
import type { Logger } from '../../lib/logging/logger.js';
import { createGrpcServer } from '../../lib/grpc/service.js';
import { unary } from '../../lib/grpc/unary.js';
import { packageVersion } from '../../lib/version.js';
import { parseMountRequest } from './mount-request.js';
import type { ProviderMetrics } from './provider-metrics.js';
import type { SecretsProvider } from './provider.js';

/** The runtime_name every provider of this project reports from Version. */
export const RUNTIME_NAME_PREFIX = 'secrets-store-csi';

/** v1alpha1 handlers for `provider`: parse the request, call the provider, build the response. */
export function providerHandlers(
  provider: SecretsProvider,
  logger: Logger,
  metrics?: ProviderMetrics,
): CSIDriverProviderHandlers {
  return {
    Version: unary(
      'Version',
      async () => ({
        version: 'v1alpha1',
        runtime_name: `${RUNTIME_NAME_PREFIX}-${provider.name}`,
        runtime_version: packageVersion(),
      }),
      logger,
    ),
    Mount: unary(
      'Mount',
      async (raw, ctx): Promise<MountResponse> => {
        const request = parseMountRequest(raw);
        const result = await provider.mount(request, { signal: ctx.signal, deadline: ctx.deadline, logger });
        logger.info('mount served', {
          targetPath: request.targetPath,
          objects: result.objectVersions.length,
          files: result.files.length,
        });
        return {
          object_version: result.objectVersions.map((v) => ({ id: v.id, version: v.version })),
          files: result.files.map((f) => ({ path: f.path, mode: f.mode, contents: f.contents })),
        };
      },
      logger,
      (method, error, ms) => {
        if (method !== 'Mount') return;
        metrics?.mountServed(error?.reason, ms / 1000);
        if (error) logger.warn('mount failed', { code: error.kind, reason: error.reason, error: error.message });
      },
    ),
  };
}

/** A gRPC server with the CSIDriverProvider service of `provider` registered (not yet bound). */
export function createProviderServer(
  provider: SecretsProvider,
  logger: Logger,
  metrics?: ProviderMetrics,
): grpc.Server {
  const server = createGrpcServer();
  server.addService(providerProto().CSIDriverProvider.service, providerHandlers(provider, logger, metrics));
  return server;
}
