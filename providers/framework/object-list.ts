// The `objects` parameter of the vault and exec providers: a YAML list of maps, each with
// an objectName that is a file name in the volume, unique in the list, and a
// filePermission as HashiCorp's provider reads it (yaml.v3 into an os.FileMode).
import type { Document } from 'yaml';
import { pathProblem } from '../../lib/provider-file-path.js';
import { quoted } from '../../lib/untrusted-text.js';
import { describeNode, goUnsigned, mapEntries, parseYamlList, resolveAlias } from './go-yaml.js';
import { fieldName, goStringField, type InvalidParameter } from './parameter-errors.js';

/** What reading an object list needs to know of its provider. */
export interface ObjectListRules {
  /** The provider's parameter error. */
  readonly invalid: InvalidParameter;
  /** The fields an object may have; others are warned about and ignored. */
  readonly known: ReadonlySet<string>;
  /** The object's kind in the warning, e.g. "a Vault object". */
  readonly kind: string;
}

/** One entry of the list, read as far as every provider reads it. */
export interface ObjectEntry {
  readonly fields: ReadonlyMap<string, unknown>;
  readonly objectName: string;
  /** Names a field of this entry for messages: `objects[1] ("db-pass").secretKey`. */
  readonly field: (name: string) => string;
  /** A string field: any scalar's text, as yaml.v3 fills a Go string; undefined when empty. */
  readonly string: (name: string) => string | undefined;
}

/** Reads entry `index`: a map with a required objectName the volume can hold; unknown fields warn. */
export function readObjectEntry(
  entry: unknown,
  index: number,
  doc: Document,
  rules: ObjectListRules,
  warnings: string[],
): ObjectEntry {
  const { invalid } = rules;
  const entries = mapEntries(entry, doc);
  if (!entries) throw invalid(`objects[${index}] must be a map, not ${describeNode(entry)}`);
  const fields = new Map(entries);
  const objectName = goStringField(fields.get('objectName'), `objects[${index}].objectName`, invalid) || undefined;
  if (objectName === undefined) throw invalid(`objects[${index}].objectName is required`);
  const field = (name: string) => fieldName('objects', index, objectName, name);
  const problem = pathProblem(objectName);
  if (problem) throw invalid(`${field('objectName')} is not a file name the volume can hold: ${problem}`);
  for (const [key] of entries)
    if (!rules.known.has(key))
      warnings.push(`${field(key === '' ? '(key)' : key)} is not a field of ${rules.kind}; ignored`);
  const string = (name: string) => goStringField(fields.get(name), field(name), invalid) || undefined;
  return { fields, objectName, field, string };
}

/** filePermission: an unsigned integer (0600 octal or 384) up to 0777; 0, as unset in HashiCorp's provider, is undefined. */
export function filePermissionField(entry: ObjectEntry, invalid: InvalidParameter): number | undefined {
  const mode = goUnsigned(entry.fields.get('filePermission'));
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777)) {
    throw invalid(`${entry.field('filePermission')} must be a file mode from 0 to 0777, such as 0600 (octal) or 384`);
  }
  return mode === 0 ? undefined : mode;
}

/**
 * Parses the `objects` list `raw` (at most `max` entries) with `parse`, refusing an
 * objectName listed twice. `required` is the message when the parameter is missing.
 */
export function parseObjectList<T extends { readonly objectName: string }>(
  raw: string | undefined,
  max: number,
  rules: ObjectListRules & { readonly required: string },
  parse: (entry: unknown, index: number, doc: Document) => T,
): T[] {
  const { invalid } = rules;
  if (raw === undefined || raw.trim() === '') throw invalid(rules.required);
  let parsed: { readonly doc: Document; readonly items: readonly unknown[] };
  try {
    parsed = parseYamlList(raw, 'objects', max);
  } catch (err) {
    throw invalid((err as Error).message);
  }
  const { doc } = parsed;
  const seen = new Set<string>();
  return parsed.items.map((item, i) => {
    const object = parse(resolveAlias(item, doc), i, doc);
    if (seen.has(object.objectName))
      throw invalid(
        `objects[${i}].objectName ${quoted(object.objectName, 64)} is listed twice; each objectName must be unique`,
      );
    seen.add(object.objectName);
    return object;
  });
}
