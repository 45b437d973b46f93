import type { ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import type { ProviderContext, ProviderDefinition } from '../framework/run-provider.js';
import { PkiMetrics } from './pki-metrics.js';
import { PkiProvider } from './pki-provider.js';
import { pkiProviderFlags, pkiSettings } from './settings.js';

/** The `pki` provider process: `secrets-store-csi provider pki [--min-duration 1h] [--ca-dir DIR]`. */
export const pkiProviderDefinition: ProviderDefinition = {
  name: 'pki',
  flags: pkiProviderFlags,
  async create(flags: ParsedFlags, logger: Logger, context: ProviderContext) {
    const settings = pkiSettings(flags);
    logger.info('pki provider settings', {
      minDurationSeconds: settings.minDurationSeconds,
      caDir: settings.caDir ?? '',
    });
    return new PkiProvider(settings, { metrics: new PkiMetrics(context.metricsRegistry) });
  },
};
