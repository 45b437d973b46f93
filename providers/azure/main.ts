import type { ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { ProviderContext, ProviderDefinition } from '../framework/run-provider.js';
import { AzureMetrics } from './azure-metrics.js';
import { AzureProvider } from './azure-provider.js';
import { azureHealthAddress, azureProviderFlags, azureSettings } from './settings.js';

/** The `azure` provider process: `secrets-store-csi provider azure [--construct-pem-chain …]`. */
export const azureProviderDefinition: ProviderDefinition = {
  name: 'azure',
  flags: azureProviderFlags,
  healthAddress: (flags) => ({
    address: azureHealthAddress(flags),
    flag: flags.given.has('health-addr') ? '--health-addr' : '--healthz-port',
  }),
  async create(flags: ParsedFlags, logger: Logger, context: ProviderContext) {
    const settings = azureSettings(flags, process.env);
    if (settings.connectTo.length > 0) {
      logger.warn('TEST-ONLY --test-only-connect-to is set: connections to these hosts go elsewhere', {
        rules: settings.connectTo.map((r) => `${r.host}:${r.port}=${r.toHost}:${r.toPort}`).join(','),
      });
    }
    logger.info('azure provider settings', {
      cloudName: settings.cloudName,
      constructPemChain: settings.constructPemChain,
      writeCertAndKeyInSeparateFiles: settings.writeCertAndKeyInSeparateFiles,
      readCacheWindowMs: settings.readCacheWindowMs,
      identityCacheSize: settings.identityCacheSize,
    });
    return new AzureProvider(settings, { metrics: new AzureMetrics(context.metricsRegistry) });
  },
};
