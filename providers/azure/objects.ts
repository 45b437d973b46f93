// The `objects` parameter, read as Azure's provider v1.8.2 reads it
// (pkg/provider/types, provider.go, validate.go): yaml.v3 decodes it into
// {array: []string}, then each string into KeyVaultObject{objectName, objectAlias,
// objectVersion, objectVersionHistory, objectType, objectFormat, objectEncoding,
// filePermission}; every string field is trimmed (Go's strings.TrimSpace) and then
// validated. Scalars are read as yaml.v3 fills Go fields (framework/go-yaml.ts). Where
// upstream fails late or not at all (an unknown objectType at fetch time, a bad
// filePermission silently becoming mode 0, two objects writing one file, a pinned
// version missing from the history) this fails at once with INVALID_ARGUMENT naming
// the object and field. Unknown fields are ignored upstream; here they become warnings.
import { isSeq, type Document } from 'yaml';
import { pathProblem } from '../../lib/provider-file-path.js';
import { quoted } from '../../lib/untrusted-text.js';
import {
  describeNode,
  goInteger,
  goString,
  mapEntries,
  MAX_YAML_PARAMETER_BYTES,
  NOT_A_SCALAR,
  parseYamlParameter,
  resolveAlias,
} from '../framework/go-yaml.js';
import { fieldName as objectFieldName, goStringField } from '../framework/parameter-errors.js';
import { invalidParameter } from './azure-errors.js';
import { goTrimSpace } from './go-strings.js';

/** Key Vault's three object kinds, spelled as upstream's objectType (case-sensitive there). */
export type KeyVaultObjectType = 'secret' | 'key' | 'cert';
/** How a secret's value becomes the file's bytes (objectEncoding). */
export type ObjectEncoding = 'utf-8' | 'base64' | 'hex';
/** What a certificate-backed secret becomes: PEM (key then chain) or the PFX as stored. */
export type ObjectFormat = 'pem' | 'pfx';

/** One entry of `objects.array`: a Key Vault object and the file(s) it becomes. */
export interface KeyVaultObject {
  readonly objectName: string;
  readonly objectType: KeyVaultObjectType;
  /** The file name when set (upstream GetFileName: objectAlias, else objectName). */
  readonly objectAlias: string | undefined;
  /** A pinned version id; undefined for the latest ("" or "latest"). */
  readonly objectVersion: string | undefined;
  /** Versions to write as `<fileName>/0 … /N-1`; 1 (or less) writes one file `<fileName>`. */
  readonly objectVersionHistory: number;
  readonly objectFormat: ObjectFormat;
  readonly objectEncoding: ObjectEncoding;
  /** File mode; undefined means the Mount's default permission. */
  readonly filePermission: number | undefined;
  /** objectAlias, else objectName: the file (or, with a history, the directory) written. */
  readonly fileName: string;
}

/** `objects` parsed: the objects, and warnings (ignored fields) for the log. */
export interface ParsedKeyVaultObjects {
  readonly objects: readonly KeyVaultObject[];
  readonly warnings: readonly string[];
}

/**
 * Most files one class may ask for, objects times versions: each is a Key Vault read
 * and a file held in memory until the Mount is answered (upstream sets no bound; the
 * vault provider's measure of 1,000 applies here too).
 */
export const MAX_OBJECTS = 1000;

const FIELDS = new Set([
  'objectName',
  'objectAlias',
  'objectVersion',
  'objectVersionHistory',
  'objectType',
  'objectFormat',
  'objectEncoding',
  'filePermission',
]);
const TYPES: readonly KeyVaultObjectType[] = ['secret', 'key', 'cert'];
const ENCODINGS: readonly ObjectEncoding[] = ['utf-8', 'base64', 'hex'];
/** Key Vault object names: 1-127 letters, digits and dashes (they become URL path segments). */
const OBJECT_NAME = /^[0-9A-Za-z-]{1,127}$/;
/** Key Vault version ids are 32 hex digits; anything URL-safe of that kind is passed on. */
const OBJECT_VERSION = /^[0-9A-Za-z]{1,64}$/;
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** Warnings (ignored fields) logged per Mount at most; the rest are counted. */
const MAX_WARNINGS = 10;

/** The parameter parsed bounded and linear (framework go-yaml.ts), as INVALID_ARGUMENT when it can't be. */
function yamlParameter(text: string, what: string): Document {
  try {
    return parseYamlParameter(text, what);
  } catch (err) {
    throw invalidParameter((err as Error).message);
  }
}

/** `objects.array[1] ("db-pass").objectType`: a field named for messages. */
function fieldName(index: number, objectName: string | undefined, field: string): string {
  return objectFieldName('objects.array', index, objectName, field);
}

/** A string field as yaml.v3 fills a Go string, then strings.TrimSpace as upstream's formatKeyVaultObject. */
function stringField(node: unknown, name: string): string {
  return goTrimSpace(goStringField(node, name, invalidParameter));
}

/**
 * objectVersionHistory, an int32 in upstream: yaml.v3 takes an integer (Go's base-0
 * syntax) or a float, truncated (decode.go: float64 → SetInt(int64(f))). A quoted number
 * is a type error there; here it means what it would unquoted.
 */
function versionHistory(node: unknown, name: string): number {
  const value = goString(node);
  if (value === NOT_A_SCALAR) throw invalidParameter(`${name} must be a number, not ${describeNode(node)}`);
  const text = (value ?? '').trim();
  if (text === '') return 0;
  let n = goInteger(text);
  if (n === undefined && YAML_FLOAT.test(text.replace(/_/g, ''))) n = Math.trunc(Number(text.replace(/_/g, '')));
  if (n === undefined || !Number.isFinite(n))
    throw invalidParameter(`${name} must be a whole number of versions, not ${quoted(text, 32)}`);
  if (n > MAX_OBJECTS) throw invalidParameter(`${name} is ${n}; at most ${MAX_OBJECTS} versions can be written`);
  return Math.max(n, 0);
}

/** filePermission: Go's strconv.ParseInt(s, 8, 32) as upstream's GetFilePermission, limited to 0-0777. */
function filePermission(text: string, name: string): number | undefined {
  if (text === '') return undefined;
  const mode = /^\+?[0-7]{1,11}$/.test(text) ? parseInt(text.replace(/^\+/, ''), 8) : NaN;
  if (!(mode >= 0 && mode <= 0o777))
    throw invalidParameter(
      `${name} must be an octal file mode from 0 to 0777, such as "0644", not ${quoted(text, 16)}`,
    );
  return mode;
}

/**
 * objectFormat and objectEncoding, as upstream's validate.go checks them: the format pem or
 * pfx in any case, lowercase "pfx" refused for a key or cert (others are ignored for them);
 * the encoding only for secrets, utf-8, base64 or hex in any case.
 */
function formatAndEncoding(
  objectType: KeyVaultObjectType,
  text: (field: string) => string,
  field: (name: string) => string,
): { objectFormat: ObjectFormat; objectEncoding: ObjectEncoding } {
  const formatText = text('objectFormat');
  const objectFormat: ObjectFormat = formatText.toLowerCase() === 'pfx' ? 'pfx' : 'pem';
  if (formatText !== '' && formatText.toLowerCase() !== 'pem' && formatText.toLowerCase() !== 'pfx')
    throw invalidParameter(`${field('objectFormat')} must be pem or pfx, not ${quoted(formatText, 16)}`);
  if (formatText === 'pfx' && objectType !== 'secret')
    throw invalidParameter(
      `${field('objectFormat')} pfx is only supported for objectType: secret (a certificate's PFX is its secret)`,
    );
  const encodingText = text('objectEncoding');
  if (encodingText !== '' && objectType !== 'secret')
    throw invalidParameter(`${field('objectEncoding')} is only supported for objectType: secret`);
  const objectEncoding = encodingText === '' ? 'utf-8' : ENCODINGS.find((e) => e === encodingText.toLowerCase());
  if (!objectEncoding)
    throw invalidParameter(`${field('objectEncoding')} must be utf-8, base64 or hex, not ${quoted(encodingText, 16)}`);
  return { objectFormat, objectEncoding };
}

function parseObject(text: string, index: number, warnings: string[]): KeyVaultObject {
  const doc: Document = yamlParameter(text, `objects.array[${index}]`);
  const root = resolveAlias(doc.contents, doc);
  const entries = root === null || describeNode(root) === 'null' ? [] : mapEntries(root, doc);
  if (!entries)
    throw invalidParameter(
      `objects.array[${index}] must hold a YAML map of objectName, objectType, …; not ${describeNode(root)}`,
    );
  const fields = new Map(entries);
  const objectName = stringField(fields.get('objectName'), `objects.array[${index}].objectName`);
  if (objectName === '') throw invalidParameter(`objects.array[${index}].objectName is required`);
  const field = (f: string) => fieldName(index, objectName, f);
  if (!OBJECT_NAME.test(objectName))
    throw invalidParameter(`${field('objectName')} must be a Key Vault object name: 1-127 letters, digits and dashes`);
  for (const [key] of entries)
    if (!FIELDS.has(key))
      warnings.push(
        `${fieldName(index, objectName, key === '' ? '(key)' : key)} is not a field of an Azure Key Vault object; ignored`,
      );

  const typeText = stringField(fields.get('objectType'), field('objectType'));
  const objectType = TYPES.find((t) => t === typeText);
  if (!objectType)
    throw invalidParameter(`${field('objectType')} must be secret, key or cert, not ${quoted(typeText, 16)}`);

  const versionText = stringField(fields.get('objectVersion'), field('objectVersion'));
  const objectVersion = versionText === '' || versionText === 'latest' ? undefined : versionText;
  if (objectVersion !== undefined && !OBJECT_VERSION.test(objectVersion))
    throw invalidParameter(
      `${field('objectVersion')} must be a Key Vault version id (letters and digits), "latest" or empty`,
    );

  const { objectFormat, objectEncoding } = formatAndEncoding(
    objectType,
    (f) => stringField(fields.get(f), field(f)),
    field,
  );

  const aliasText = stringField(fields.get('objectAlias'), field('objectAlias'));
  const objectAlias = aliasText === '' ? undefined : aliasText;
  const fileName = objectAlias ?? objectName;
  const problem = pathProblem(fileName);
  if (problem)
    throw invalidParameter(
      `${field('objectAlias')} ${quoted(fileName, 128)} is not a file name the volume can hold: ${problem}`,
    );

  return {
    objectName,
    objectType,
    objectAlias,
    objectVersion,
    objectVersionHistory: versionHistory(fields.get('objectVersionHistory'), field('objectVersionHistory')),
    objectFormat,
    objectEncoding,
    filePermission: filePermission(
      stringField(fields.get('filePermission'), field('filePermission')),
      field('filePermission'),
    ),
    fileName,
  };
}

/** True when the object writes `<fileName>/0 … /N-1` (upstream: not IsSyncingSingleVersion). */
export function hasVersionHistory(object: KeyVaultObject): boolean {
  return object.objectVersionHistory > 1;
}

/** The object's id in SecretProviderClassPodStatus: `<type>/<name>` (upstream GetObjectUID). */
export function objectId(object: KeyVaultObject): string {
  return `${object.objectType}/${object.objectName}`;
}

/** The id of version `index` of an object with a history: `<type>/<name>/<index>`. */
export function historyObjectId(object: KeyVaultObject, index: number): string {
  return `${objectId(object)}/${index}`;
}

/** The file of version `index` of an object with a history: `<fileName>/<index>`. */
export function historyFileName(object: KeyVaultObject, index: number): string {
  return `${object.fileName}/${index}`;
}

/** Refuses two objects writing the same file, or one writing inside another's file (`a` and `a/0`). */
function checkFileNames(objects: readonly KeyVaultObject[]): void {
  const owner = new Map<string, number>();
  objects.forEach((o, i) => {
    const before = owner.get(o.fileName);
    if (before !== undefined)
      throw invalidParameter(
        `objects.array[${before}] and objects.array[${i}] both write ${quoted(o.fileName, 128)}: give one an objectAlias`,
      );
    owner.set(o.fileName, i);
  });
  objects.forEach((o, i) => {
    const parts = o.fileName.split('/');
    for (let n = 1; n < parts.length; n++) {
      const parent = owner.get(parts.slice(0, n).join('/'));
      if (parent !== undefined)
        throw invalidParameter(
          `objects.array[${i}] writes ${quoted(o.fileName, 128)} inside objects.array[${parent}]'s ${quoted(parts.slice(0, n).join('/'), 128)}`,
        );
    }
  });
}

/**
 * Parses the `objects` parameter (YAML `array:` of YAML strings). Every problem is an
 * INVALID_ARGUMENT naming the entry (index and objectName) and field. An empty array
 * is no objects (upstream then answers with no files). Values are names, never secrets.
 */
export function parseKeyVaultObjects(raw: string | undefined): ParsedKeyVaultObjects {
  const text = goTrimSpace(raw ?? '');
  if (text === '')
    throw invalidParameter(
      'objects is required: a YAML "array:" of objects, each a YAML string with objectName and objectType',
    );
  const doc = yamlParameter(text, 'objects');
  const root = resolveAlias(doc.contents, doc);
  const entries = describeNode(root) === 'null' ? [] : mapEntries(root, doc);
  if (!entries) throw invalidParameter(`objects must be a YAML map with an "array:" list, not ${describeNode(root)}`);
  const list = new Map(entries).get('array');
  const warnings: string[] = [];
  if (list === undefined || describeNode(list) === 'null')
    return { objects: [], warnings: ['objects has no "array:" entries: nothing is mounted'] };
  if (!isSeq(list)) throw invalidParameter(`objects.array must be a list of YAML strings, not ${describeNode(list)}`);
  // Bounded before any entry is parsed: the count, and the entries' text together
  // (aliases could repeat one long entry thousands of times).
  if (list.items.length > MAX_OBJECTS)
    throw invalidParameter(
      `objects.array lists ${list.items.length} entries; at most ${MAX_OBJECTS} are allowed per class`,
    );
  const texts = list.items.map((item, i) => {
    const node = resolveAlias(item, doc);
    const value = goString(node);
    // yaml.v3: "cannot unmarshal !!map into string": each entry is YAML text (`- |`).
    if (value === NOT_A_SCALAR)
      throw invalidParameter(
        `objects.array[${i}] must be a YAML string (write "- |" before the object's fields), not ${describeNode(node)}`,
      );
    return value ?? '';
  });
  const total = texts.reduce((sum, t) => sum + Buffer.byteLength(t, 'utf8'), 0);
  if (total > MAX_YAML_PARAMETER_BYTES)
    throw invalidParameter(
      `objects.array entries hold ${total} bytes of YAML together (aliases expanded); at most ${MAX_YAML_PARAMETER_BYTES} are read`,
    );
  const objects = texts.map((value, i) => parseObject(value, i, warnings));
  if (warnings.length > MAX_WARNINGS)
    warnings.splice(
      MAX_WARNINGS,
      warnings.length - MAX_WARNINGS,
      `… and ${warnings.length - MAX_WARNINGS} more ignored fields`,
    );
  const files = objects.reduce((sum, o) => sum + Math.max(o.objectVersionHistory, 1), 0);
  if (files > MAX_OBJECTS)
    throw invalidParameter(
      `objects asks for ${files} files (objects times objectVersionHistory); at most ${MAX_OBJECTS} are allowed per class`,
    );
  checkFileNames(objects);
  return { objects, warnings };
}
