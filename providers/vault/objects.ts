// The `objects` parameter, read as HashiCorp's provider reads it (internal/config:
// yaml.v3 into []Secret{objectName, secretPath, secretKey, method, secretArgs,
// filePermission, encoding}; see go-yaml.ts for how scalars are read). Unknown fields
// are ignored there too; here each one becomes a warning the caller logs, so a typo
// such as `secretkey` is visible instead of silently mounting the whole secret.
import type { Document } from 'yaml';
import { pathProblem } from '../../lib/provider-file-path.js';
import { quoted } from '../../lib/untrusted-text.js';
import {
  describeNode,
  goString,
  goUnsigned,
  goValue,
  mapEntries,
  MAX_VALUES,
  NOT_A_SCALAR,
  parseYamlList,
  resolveAlias,
} from '../framework/go-yaml.js';
import { invalidParameter } from './parameter-error.js';
import { parseSecretPath } from './secret-path.js';

/** The HTTP methods an object may use: GET reads; PUT and POST issue (PKI, database credentials). */
export type VaultMethod = 'GET' | 'PUT' | 'POST';
/** How a picked value becomes the file's bytes. */
export type VaultEncoding = 'utf-8' | 'base64' | 'hex';

/** One entry of `objects`: a file in the volume, read from one Vault path. */
export interface VaultObject {
  /** The file's path in the volume and the object's id; passes the driver's path rules. */
  readonly objectName: string;
  /** `secretPath` as written (for messages and the version). */
  readonly secretPath: string;
  /** The Vault API path after `/v1/`, without the query: `secret/data/db` or `secret/db`. */
  readonly path: string;
  /** `?version=N` of `secretPath`: the KV v2 version; undefined reads the latest. */
  readonly version: number | undefined;
  /** The other `?` parameters of `secretPath`, decoded, in order. */
  readonly query: readonly (readonly [string, string])[];
  /** The key whose value is the file; undefined: the whole data as JSON. */
  readonly secretKey: string | undefined;
  readonly method: VaultMethod;
  /** The JSON body of a PUT or POST (Vault reads no body on a GET). */
  readonly secretArgs: Readonly<Record<string, unknown>> | undefined;
  /** File mode; undefined means the Mount's default permission. */
  readonly filePermission: number | undefined;
  readonly encoding: VaultEncoding;
}

/**
 * Most entries of `objects`: each is a Vault call and a file held in memory until the
 * whole Mount is answered (HashiCorp's provider sets no bound; 10,000 objects took 428 MB
 * here, far past the DaemonSet's 256Mi). One class this large is far beyond real use.
 */
export const MAX_OBJECTS = 1000;

/** `objects` parsed: the objects, and warnings (ignored fields) for the log. */
export interface ParsedObjects {
  readonly objects: readonly VaultObject[];
  readonly warnings: readonly string[];
}

const FIELDS = new Set(['objectName', 'secretPath', 'secretKey', 'method', 'secretArgs', 'filePermission', 'encoding']);
const METHODS: readonly VaultMethod[] = ['GET', 'PUT', 'POST'];
const ENCODINGS: readonly VaultEncoding[] = ['utf-8', 'base64', 'hex'];

/** A field of an object, named for messages: `objects[1] ("db-pass").secretKey`. */
function fieldName(index: number, objectName: string | undefined, field: string): string {
  return `objects[${index}]${objectName === undefined ? '' : ` (${quoted(objectName, 64)})`}.${field}`;
}

/** A string field: any scalar's text, as yaml.v3 fills a Go string. */
function stringField(node: unknown, name: string): string | undefined {
  const value = goString(node);
  if (value === NOT_A_SCALAR) throw invalidParameter(`${name} must be a string, not ${describeNode(node)}`);
  return value === '' ? undefined : value;
}

function parseObject(
  entry: unknown,
  index: number,
  doc: Document,
  warnings: string[],
  budget: { left: number },
): VaultObject {
  const entries = mapEntries(entry, doc);
  if (!entries) throw invalidParameter(`objects[${index}] must be a map, not ${describeNode(entry)}`);
  const fields = new Map(entries);
  const objectName = stringField(fields.get('objectName'), `objects[${index}].objectName`);
  if (objectName === undefined) throw invalidParameter(`objects[${index}].objectName is required`);
  const field = (f: string) => fieldName(index, objectName, f);
  const problem = pathProblem(objectName);
  if (problem) throw invalidParameter(`${field('objectName')} is not a file name the volume can hold: ${problem}`);
  for (const [key] of entries)
    if (!FIELDS.has(key))
      warnings.push(
        `${fieldName(index, objectName, key === '' ? '(key)' : key)} is not a field of a Vault object; ignored`,
      );

  const secretPath = stringField(fields.get('secretPath'), field('secretPath'));
  if (secretPath === undefined) throw invalidParameter(`${field('secretPath')} is required`);
  const parsedPath = parseSecretPath(secretPath);
  if ('problem' in parsedPath)
    throw invalidParameter(`${field('secretPath')} ${quoted(secretPath, 128)} ${parsedPath.problem}`);

  const methodText = stringField(fields.get('method'), field('method')) ?? 'GET';
  const method = METHODS.find((m) => m === methodText.toUpperCase());
  if (!method) throw invalidParameter(`${field('method')} must be GET, PUT or POST, not ${quoted(methodText, 16)}`);

  const encodingText = stringField(fields.get('encoding'), field('encoding')) ?? 'utf-8';
  const encoding = ENCODINGS.find((e) => e === encodingText.toLowerCase());
  if (!encoding)
    throw invalidParameter(`${field('encoding')} must be utf-8, base64 or hex, not ${quoted(encodingText, 16)}`);

  const secretKey = stringField(fields.get('secretKey'), field('secretKey'));
  if (secretKey === undefined && encoding !== 'utf-8')
    warnings.push(`${field('encoding')} has no effect without secretKey: the file is the whole data as JSON`);

  const mode = goUnsigned(fields.get('filePermission'));
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777)) {
    throw invalidParameter(
      `${field('filePermission')} must be a file mode from 0 to 0777, such as 0600 (octal) or 384`,
    );
  }

  const argsNode = fields.get('secretArgs');
  let secretArgs: Record<string, unknown> | undefined;
  if (argsNode !== undefined && describeNode(argsNode) !== 'null') {
    if (describeNode(argsNode) !== 'a map')
      throw invalidParameter(`${field('secretArgs')} must be a map, not ${describeNode(argsNode)}`);
    try {
      secretArgs = goValue(argsNode, doc, field('secretArgs'), budget) as Record<string, unknown>;
    } catch (err) {
      throw invalidParameter((err as Error).message);
    }
  }
  return {
    objectName,
    secretPath,
    ...parsedPath,
    secretKey,
    method,
    secretArgs,
    // 0 is "unset" in HashiCorp's provider (a zero os.FileMode): the Mount's permission applies.
    filePermission: mode === 0 ? undefined : mode,
    encoding,
  };
}

/**
 * Parses the `objects` parameter (a YAML list) into Vault objects. Every problem is an
 * INVALID_ARGUMENT naming the field and the object (by index and objectName); an
 * objectName listed twice is named. Never echoes values that could be secret: objects
 * hold names and paths, not secrets.
 */
export function parseObjects(raw: string | undefined): ParsedObjects {
  if (raw === undefined || raw.trim() === '')
    throw invalidParameter('objects is required: a YAML list of objectName/secretPath entries');
  let parsed: { readonly doc: Document; readonly items: readonly unknown[] };
  try {
    parsed = parseYamlList(raw, 'objects', MAX_OBJECTS);
  } catch (err) {
    throw invalidParameter((err as Error).message);
  }
  const { doc } = parsed;
  const warnings: string[] = [];
  const seen = new Set<string>();
  // One bound on the secretArgs values of all entries together (go-yaml.ts, MAX_VALUES).
  const budget = { left: MAX_VALUES };
  const objects = parsed.items.map((entry, i) => {
    const object = parseObject(resolveAlias(entry, doc), i, doc, warnings, budget);
    if (seen.has(object.objectName))
      throw invalidParameter(
        `objects[${i}].objectName ${quoted(object.objectName, 64)} is listed twice; each objectName must be unique`,
      );
    seen.add(object.objectName);
    return object;
  });
  return { objects, warnings };
}
