// The `objects` parameter, read as HashiCorp's provider reads it (internal/config:
// yaml.v3 into []Secret{objectName, secretPath, secretKey, method, secretArgs,
// filePermission, encoding}; see go-yaml.ts for how scalars are read). Unknown fields
// are ignored there too; here each one becomes a warning the caller logs, so a typo
// such as `secretkey` is visible instead of silently mounting the whole secret.
import type { Document } from 'yaml';
import { quoted } from '../../lib/untrusted-text.js';
import { describeNode, goValue, MAX_VALUES } from '../framework/go-yaml.js';
import {
  filePermissionField,
  parseObjectList,
  readObjectEntry,
  type ObjectEntry,
  type ObjectListRules,
} from '../framework/object-list.js';
import { invalidParameter } from './vault-errors.js';
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

const RULES: ObjectListRules = { invalid: invalidParameter, known: FIELDS, kind: 'a Vault object' };

/** secretArgs: a map sent as the body of a PUT or POST, its values as yaml.v3 reads them. */
function secretArgsField(
  entry: ObjectEntry,
  doc: Document,
  budget: { left: number },
): Record<string, unknown> | undefined {
  const argsNode = entry.fields.get('secretArgs');
  if (argsNode === undefined || describeNode(argsNode) === 'null') return undefined;
  if (describeNode(argsNode) !== 'a map')
    throw invalidParameter(`${entry.field('secretArgs')} must be a map, not ${describeNode(argsNode)}`);
  try {
    return goValue(argsNode, doc, entry.field('secretArgs'), budget) as Record<string, unknown>;
  } catch (err) {
    throw invalidParameter((err as Error).message);
  }
}

function parseObject(
  raw: unknown,
  index: number,
  doc: Document,
  warnings: string[],
  budget: { left: number },
): VaultObject {
  const entry = readObjectEntry(raw, index, doc, RULES, warnings);
  const { objectName, field } = entry;
  const secretPath = entry.string('secretPath');
  if (secretPath === undefined) throw invalidParameter(`${field('secretPath')} is required`);
  const parsedPath = parseSecretPath(secretPath);
  if ('problem' in parsedPath)
    throw invalidParameter(`${field('secretPath')} ${quoted(secretPath, 128)} ${parsedPath.problem}`);

  const methodText = entry.string('method') ?? 'GET';
  const method = METHODS.find((m) => m === methodText.toUpperCase());
  if (!method) throw invalidParameter(`${field('method')} must be GET, PUT or POST, not ${quoted(methodText, 16)}`);

  const encodingText = entry.string('encoding') ?? 'utf-8';
  const encoding = ENCODINGS.find((e) => e === encodingText.toLowerCase());
  if (!encoding)
    throw invalidParameter(`${field('encoding')} must be utf-8, base64 or hex, not ${quoted(encodingText, 16)}`);

  const secretKey = entry.string('secretKey');
  if (secretKey === undefined && encoding !== 'utf-8')
    warnings.push(`${field('encoding')} has no effect without secretKey: the file is the whole data as JSON`);
  return {
    objectName,
    secretPath,
    ...parsedPath,
    secretKey,
    method,
    secretArgs: secretArgsField(entry, doc, budget),
    filePermission: filePermissionField(entry, invalidParameter),
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
  const warnings: string[] = [];
  // One bound on the secretArgs values of all entries together (go-yaml.ts, MAX_VALUES).
  const budget = { left: MAX_VALUES };
  const required = 'objects is required: a YAML list of objectName/secretPath entries';
  const objects = parseObjectList(raw, MAX_OBJECTS, { ...RULES, required }, (entry, i, doc) =>
    parseObject(entry, i, doc, warnings, budget),
  );
  return { objects, warnings };
}
