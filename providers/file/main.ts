import { stringFlag, type ParsedFlags } from '../../lib/flags.js';
import type { Logger } from '../../lib/logging/logger.js';
import { loadOrCreateHmacKey } from '../framework/hmac-version.js';
import type { ProviderDefinition } from '../framework/run-provider.js';
import { FileProvider } from './file-provider.js';

/** The `file` provider process: `secrets-store-csi provider file --root DIR`. */
export const fileProviderDefinition: ProviderDefinition = {
  name: 'file',
  flags: {
    root: {
      type: 'string',
      default: '/var/lib/secrets-store-csi-file-provider',
      help: 'directory the objects are read from (nothing outside it is served)',
    },
    'hmac-key-file': {
      type: 'string',
      default: '',
      help: 'file holding the key that makes versions (created if missing); without it versions change on restart',
    },
  },
  async create(flags: ParsedFlags, logger: Logger) {
    // An empty --root (an unset Helm value) would otherwise name "/" once paths are joined to it.
    if (stringFlag(flags, 'root').trim() === '')
      throw new Error('--root must name the directory the objects are read from, got ""');
    return new FileProvider({
      root: stringFlag(flags, 'root'),
      hmacKey: await loadOrCreateHmacKey(stringFlag(flags, 'hmac-key-file'), logger),
    });
  },
};
