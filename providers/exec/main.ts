import type { ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import { loadOrCreateHmacKey } from '../framework/hmac-version.js';
import type { ProviderDefinition } from '../framework/run-provider.js';
import { ExecProvider } from './exec-provider.js';
import { execProviderFlags, execSettings } from './settings.js';
import { runHelper } from './helper-runner.js';
import { createOrphanReaper } from './orphan-reaper.js';

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
    // Helpers' descendants that leave their process group are adopted and killed when it ends.
    const reaper = createOrphanReaper(logger);
    return new ExecProvider(settings, await loadOrCreateHmacKey(settings.hmacKeyFile, logger), (run) =>
      runHelper({ ...run, lifecycle: reaper }),
    );
  },
};
