import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { SscError } from '../../proto/runtime/errors.js';
import type { Logger } from '../../proto/runtime/logger.js';
import { parseSecretProviderClass, SPC_KIND, type SecretProviderClass } from './secret-provider-class.js';

/** Where the driver finds SecretProviderClasses: a folder (local mode) or the API (issue 3). */
export interface SecretProviderClassSource {
  /** The class `name` in `namespace`; throws not-found naming `namespace/name`. */
  get(namespace: string, name: string): Promise<SecretProviderClass>;
}

/**
 * Local mode (SPEC 10): reads SecretProviderClass YAML files (`*.yaml`, `*.yml`, several
 * documents each) from a folder on every lookup, so edits apply to the next publish.
 * Documents of other kinds are ignored; invalid classes are logged and skipped.
 */
export class LocalSecretProviderClassSource implements SecretProviderClassSource {
  constructor(private readonly dir: string, private readonly logger: Logger) {}

  async get(namespace: string, name: string): Promise<SecretProviderClass> {
    for (const spc of await this.list()) {
      if (spc.namespace === namespace && spc.name === name) return spc;
    }
    throw new SscError('not-found', `SecretProviderClass ${namespace}/${name} not found in ${this.dir}`, { reason: 'SecretProviderClassNotFound' });
  }

  /** Every valid class in the folder. */
  async list(): Promise<SecretProviderClass[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => /\.ya?ml$/.test(n)).sort();
    } catch (err) {
      throw new SscError('unavailable', `cannot read --spc-dir ${this.dir}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { reason: 'SecretProviderClassSourceUnavailable' });
    }
    const classes: SecretProviderClass[] = [];
    for (const file of names) {
      for (const doc of parseAllDocuments(await readFile(join(this.dir, file), 'utf8'))) {
        const obj: unknown = doc.toJS();
        if (typeof obj !== 'object' || obj === null || (obj as { kind?: unknown }).kind !== SPC_KIND) continue;
        try {
          classes.push(parseSecretProviderClass(obj));
        } catch (err) {
          this.logger.warn('skipping invalid SecretProviderClass', { file, error: (err as Error).message });
        }
      }
    }
    return classes;
  }
}
