import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SscError } from '../../lib/errors.js';
import { hmacVersion, versionKey } from '../framework/hmac-version.js';
import { logChangedObjects } from '../framework/object-versions.js';
import type {
  ProviderCallContext,
  ProviderFile,
  ProviderMountRequest,
  ProviderMountResult,
  SecretsProvider,
} from '../framework/provider.js';
import { parseFileObjects, type FileObject } from './config.js';
import { SourceContentCache, type VersionedContents } from './content-cache.js';
import { SourceReader } from './source-file.js';

/** Distinct `objects` parameters kept parsed; beyond this many, the least recently used is parsed again. */
const PARSED_OBJECTS_CACHE_SIZE = 256;

/** Options of the file provider. */
export interface FileProviderOptions {
  /** Directory the objects are read from; nothing outside it is ever served. */
  readonly root: string;
  /** Key for the HMAC that turns contents into versions (so versions reveal nothing). */
  readonly hmacKey: Buffer;
}

/**
 * Serves secrets from a directory tree on the node: the local default, and the backbone
 * of tests and the demo. Versions are an HMAC-SHA256 of the contents, so they change
 * exactly when the contents change and reveal nothing about them.
 */
export class FileProvider implements SecretsProvider {
  readonly name = 'file';
  /** Parsed `objects` parameters by their text: every pod of a class sends the same one. */
  private readonly parsedObjects = new LRUCache<string, readonly FileObject[]>({ max: PARSED_OBJECTS_CACHE_SIZE });
  /** The HMAC key, converted once (see versionKey). */
  private readonly versionKey: KeyObject;
  /** Files read before, served again while lstat says they are unchanged (content-cache.ts). */
  private readonly contents = new SourceContentCache();
  /** The version of some contents: hex HMAC-SHA256 under the provider's key. */
  private readonly versionOf = (contents: Buffer): string => hmacVersion(this.versionKey, contents);

  constructor(private readonly options: FileProviderOptions) {
    this.versionKey = versionKey(options.hmacKey);
  }

  async mount(request: ProviderMountRequest, ctx: ProviderCallContext): Promise<ProviderMountResult> {
    const objects = this.objectsOf(request.attributes);
    const source = new SourceReader(this.options.root, this.versionOf, this.contents);
    if (objects.length === 0) source.realRoot(); // RootMissing even with nothing to read
    const files: ProviderFile[] = [];
    const objectVersions: { id: string; version: string }[] = [];
    // `missingObjects: omit` (opt-in): a source file that is gone is left out of the
    // response instead of failing the Mount, so the driver drops its file.
    const omitMissing = request.attributes['missingObjects'] === 'omit';
    for (const obj of objects) {
      let read: VersionedContents;
      try {
        read = source.read(obj);
      } catch (err) {
        if (omitMissing && err instanceof SscError && err.kind === 'not-found') {
          ctx.logger.warn('object missing; omitted (missingObjects: omit)', { objectName: obj.objectName });
          continue;
        }
        throw err;
      }
      const { contents, version } = read;
      files.push({ path: obj.objectName, mode: obj.mode ?? request.permission, contents });
      objectVersions.push({ id: obj.objectName, version });
    }
    logChangedObjects(ctx.logger, request.currentObjectVersions, objectVersions);
    return { files, objectVersions };
  }

  private objectsOf(attributes: Readonly<Record<string, string>>): readonly FileObject[] {
    const key = attributes['objects'] ?? '';
    const cached = this.parsedObjects.get(key);
    if (cached) return cached;
    const objects = parseFileObjects(attributes);
    this.parsedObjects.set(key, objects);
    return objects;
  }
}
