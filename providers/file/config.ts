import { parse as parseYaml } from 'yaml';
import { invalidParameterOf } from '../framework/parameter-errors.js';

/** One object the file provider serves: a file under its root, mounted as `objectName`. */
export interface FileObject {
  /** Path of the file in the mounted volume (and the object id). */
  readonly objectName: string;
  /** Path of the source file, relative to the provider's --root. */
  readonly sourcePath: string;
  /** File mode; undefined means the driver's default permission. */
  readonly mode: number | undefined;
}

/** A bad SecretProviderClass parameter of the file provider (providers/framework/parameter-errors.ts). */
export const invalid = invalidParameterOf('file');

function parseMode(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  let mode: number;
  if (typeof value === 'number') mode = value;
  else if (typeof value === 'string' && /^0?[0-7]{1,3}$/.test(value)) mode = parseInt(value, 8);
  else throw invalid(`${field} must be an octal string such as "0600"`);
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw invalid(`${field} must be between 0000 and 0777`);
  return mode;
}

/**
 * Parses the `objects` parameter: a YAML list of `{objectName, sourcePath, mode}`.
 * `sourcePath` defaults to `objectName`. Errors name the entry and field.
 */
export function parseFileObjects(attributes: Readonly<Record<string, string>>): FileObject[] {
  const raw = attributes['objects'];
  if (raw === undefined || raw.trim() === '')
    throw invalid('parameter "objects" is required (a YAML list of objectName/sourcePath)');
  let doc: unknown;
  try {
    // YAML 1.1, as Go providers parse it (yaml.v2): an unquoted `mode: 0400` is octal.
    doc = parseYaml(raw, { version: '1.1' });
  } catch (err) {
    throw invalid(`parameter "objects" is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(doc) || doc.length === 0) throw invalid('parameter "objects" must be a non-empty YAML list');
  const names = new Set<string>();
  return doc.map((entry: unknown, i): FileObject => {
    const field = `objects[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw invalid(`${field} must be a map`);
    const e = entry as Record<string, unknown>;
    const objectName = e['objectName'];
    if (typeof objectName !== 'string' || objectName === '') throw invalid(`${field}.objectName is required`);
    if (names.has(objectName)) throw invalid(`${field}.objectName ${JSON.stringify(objectName)} is listed twice`);
    names.add(objectName);
    const sourcePath = e['sourcePath'] ?? objectName;
    if (typeof sourcePath !== 'string' || sourcePath === '')
      throw invalid(`${field}.sourcePath must be a non-empty string`);
    return { objectName, sourcePath, mode: parseMode(e['mode'], `${field}.mode`) };
  });
}
