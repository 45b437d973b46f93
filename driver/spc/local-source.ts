import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { yamlModule } from '../../lib/lazy-yaml.js';
import { SscError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logging/logger.js';
import { parseSecretProviderClass, SPC_KIND, type SecretProviderClass } from './secret-provider-class.js';

/** Where the driver finds SecretProviderClasses: a folder (local mode) or the API. */
export interface SecretProviderClassSource {
  /** The class `name` in `namespace`; throws not-found naming `namespace/name`. */
  get(namespace: string, name: string): Promise<SecretProviderClass>;
}

/** What was parsed from one file, and the stat it was parsed at. */
interface ParsedFile {
  readonly mtimeMs: number;
  readonly size: number;
  readonly classes: readonly SecretProviderClass[];
  /** Classes that failed validation, by `namespace/name`, with the reason. */
  readonly invalid: ReadonlyMap<string, SscError>;
  /** The first YAML error of a document that does not parse (its class may be the one asked for). */
  readonly parseError: string | undefined;
}

/** At most this many unparsable files are named in one "not found" message. */
const MAX_FILES_NAMED = 3;

/** The first line of a YAML parser message (the rest quotes the file), bounded. */
function yamlErrorText(err: unknown): string {
  return String((err as Error).message ?? err)
    .split('\n')[0]!
    .replace(/:$/, '')
    .slice(0, 200);
}

/**
 * Local mode: reads SecretProviderClass YAML files (`*.yaml`, `*.yml`, several
 * documents each) from a folder. Every lookup lists the folder and re-parses only files
 * whose mtime or size changed, so edits apply to the next publish at little cost.
 * Documents of other kinds are ignored; invalid classes are logged and skipped, and a
 * class not found names the files that do not parse (it may be in one of them).
 */
export class LocalSecretProviderClassSource implements SecretProviderClassSource {
  private readonly parsed = new Map<string, ParsedFile>();

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * The source for `--spc-dir`, refused at startup when the directory is missing: a typo
   * would otherwise only show as every publish failing.
   */
  static async open(dir: string, logger: Logger): Promise<LocalSecretProviderClassSource> {
    const s = await stat(dir).catch((err: NodeJS.ErrnoException) => {
      throw new Error(
        err.code === 'ENOENT'
          ? `--spc-dir ${dir} does not exist`
          : `cannot read --spc-dir ${dir} (${err.code ?? 'error'})`,
      );
    });
    if (!s.isDirectory()) throw new Error(`--spc-dir ${dir} is not a directory`);
    return new LocalSecretProviderClassSource(dir, logger);
  }

  async get(namespace: string, name: string): Promise<SecretProviderClass> {
    for (const spc of await this.list()) {
      if (spc.namespace === namespace && spc.name === name) return spc;
    }
    // A class that exists but is invalid says why, rather than "not found".
    for (const file of this.parsed.values()) {
      const invalid = file.invalid.get(`${namespace}/${name}`);
      if (invalid) throw invalid;
    }
    const unparsable = [...this.parsed]
      .filter(([, f]) => f.parseError !== undefined)
      .slice(0, MAX_FILES_NAMED)
      .map(([file, f]) => `; ${file} does not parse: ${f.parseError}`)
      .join('');
    throw new SscError('not-found', `SecretProviderClass ${namespace}/${name} not found in ${this.dir}${unparsable}`, {
      reason: 'SecretProviderClassNotFound',
    });
  }

  /** Every valid class in the folder. */
  async list(): Promise<SecretProviderClass[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => /\.ya?ml$/.test(n)).sort();
    } catch (err) {
      throw new SscError(
        'unavailable',
        `cannot read --spc-dir ${this.dir}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        { reason: 'SecretProviderClassSourceUnavailable' },
      );
    }
    for (const file of this.parsed.keys()) if (!names.includes(file)) this.parsed.delete(file);
    const classes: SecretProviderClass[] = [];
    for (const file of names) classes.push(...(await this.parseFile(file)));
    return classes;
  }

  private async parseFile(file: string): Promise<readonly SecretProviderClass[]> {
    const path = join(this.dir, file);
    const s = await stat(path).catch(() => undefined);
    if (!s?.isFile()) return [];
    const cached = this.parsed.get(file);
    if (cached && cached.mtimeMs === s.mtimeMs && cached.size === s.size) return cached.classes;
    const classes: SecretProviderClass[] = [];
    const invalid = new Map<string, SscError>();
    let parseError: string | undefined;
    for (const doc of yamlModule().parseAllDocuments(await readFile(path, 'utf8'))) {
      let obj: unknown;
      try {
        if (doc.errors[0]) throw doc.errors[0];
        obj = doc.toJS(); // throws for an alias that names no anchor
      } catch (err) {
        parseError ??= yamlErrorText(err);
        this.logger.warn('skipping a YAML document that does not parse', { file, error: yamlErrorText(err) });
        continue;
      }
      if (typeof obj !== 'object' || obj === null || (obj as { kind?: unknown }).kind !== SPC_KIND) continue;
      try {
        classes.push(parseSecretProviderClass(obj));
      } catch (err) {
        const meta = (obj as { metadata?: { name?: unknown; namespace?: unknown } }).metadata ?? {};
        const key = `${typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'default'}/${String(meta.name ?? '')}`;
        if (err instanceof SscError) invalid.set(key, err);
        this.logger.warn('skipping invalid SecretProviderClass', { file, error: (err as Error).message });
      }
    }
    this.parsed.set(file, { mtimeMs: s.mtimeMs, size: s.size, classes, invalid, parseError });
    return classes;
  }
}
