import type { ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import { loadOrCreateHmacKey } from '../framework/hmac-version.js';
import type { ProviderDefinition } from '../framework/run-provider.js';
import { ExecProvider } from './exec-provider.js';
import { execProviderFlags, execSettings } from './settings.js';

/** The `exec` provider process: `secrets-store-csi provider exec --helpers-dir DIR`. */
export const execProviderDefinition: ProviderDefinition = {
  name: 'exec',
  flags: execProviderFlags,
  async create(flags: ParsedFlags, logger: Logger) {
    const settings = execSettings(flags);
    logger.info('exec provider settings', {
      helpersDir: settings.helpersDir,
      helperTimeoutMs: settings.helperTimeoutMs,
      maxOutputBytes: settings.maxOutputBytes,
      maxConcurrentHelpers: settings.maxConcurrentHelpers,
    });
    return new ExecProvider(settings, await loadOrCreateHmacKey(settings.hmacKeyFile, logger));
  },
};
