import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { stringFlag, type ParsedFlags } from '../../proto/runtime/flags.js';
import type { Logger } from '../../proto/runtime/logger.js';
import type { ProviderDefinition } from '../framework/run-provider.js';
import { FileProvider } from './file-provider.js';

/** Reads the HMAC key, creating it (32 random bytes, 0600) when the file does not exist. */
async function loadOrCreateKey(path: string, logger: Logger): Promise<Buffer> {
  if (path === '') {
    logger.info('no --hmac-key-file: versions use a per-process key and change when the provider restarts');
    return randomBytes(32);
  }
  try {
    const key = await readFile(path);
    if (key.length < 16) throw new Error(`--hmac-key-file ${path} holds fewer than 16 bytes`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const key = randomBytes(32);
    await writeFile(path, key, { mode: 0o600, flag: 'wx' });
    logger.info('created HMAC key file', { path });
    return key;
  }
}

/** The `file` provider process: `secrets-store-csi provider file --root DIR`. */
export const fileProviderDefinition: ProviderDefinition = {
  name: 'file',
  flags: {
    'root': { type: 'string', default: '/var/lib/secrets-store-csi-file-provider', help: 'directory the objects are read from (nothing outside it is served)' },
    'hmac-key-file': { type: 'string', default: '', help: 'file holding the key that makes versions (created if missing); without it versions change on restart' },
  },
  async create(flags: ParsedFlags, logger: Logger) {
    return new FileProvider({ root: stringFlag(flags, 'root'), hmacKey: await loadOrCreateKey(stringFlag(flags, 'hmac-key-file'), logger) });
  },
};
