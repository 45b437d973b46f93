import type { ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import { loadOrCreateHmacKey } from '../framework/hmac-version.js';
import type { ProviderContext, ProviderDefinition } from '../framework/run-provider.js';
import { providerSettings, vaultProviderFlags } from './settings.js';
import { VaultMetrics } from './vault-metrics.js';
import { VaultProvider } from './vault-provider.js';

/**
 * Removes every VAULT_* variable from this process's environment once the settings were
 * read from it: node-vault and anything else loaded later must not find VAULT_TOKEN or
 * VAULT_SKIP_VERIFY there (vault-http.ts passes every option explicitly as well).
 */
export function scrubVaultEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const names = Object.keys(env).filter((k) => k.startsWith('VAULT_'));
  for (const name of names) delete env[name];
  return names;
}

/** The `vault` provider process: `secrets-store-csi provider vault [--vault-addr …]`. */
export const vaultProviderDefinition: ProviderDefinition = {
  name: 'vault',
  flags: vaultProviderFlags,
  async create(flags: ParsedFlags, logger: Logger, context: ProviderContext) {
    const settings = providerSettings(process.env, flags);
    const scrubbed = scrubVaultEnvironment();
    if (scrubbed.includes('VAULT_TOKEN'))
      logger.warn(
        "VAULT_TOKEN is set in the provider's environment and is never used: the provider logs in as each pod",
      );
    logger.info('vault provider settings', {
      vaultAddress: settings.vaultAddress,
      vaultNamespace: settings.vaultNamespace ?? '',
      vaultAuthMountPath: settings.vaultAuthMountPath,
      tlsSkipVerify: settings.tls.skipVerify,
      cacheSize: settings.cacheSize,
      requestTimeoutMs: settings.requestTimeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      readCacheWindowMs: settings.readCacheWindowMs,
    });
    return new VaultProvider(settings, {
      hmacKey: await loadOrCreateHmacKey(settings.hmacKeyFile, logger),
      metrics: new VaultMetrics(context.metricsRegistry),
    });
  },
};
