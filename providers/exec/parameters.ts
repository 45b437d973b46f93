// SecretProviderClass parameters of the exec provider (docs/providers/exec.md):
// `objects`, a YAML list of {objectName, helper, parameters, filePermission}, read
// bounded (framework go-yaml.ts), and `passServiceAccountTokens`. Pure: every problem
// is INVALID_ARGUMENT naming the field, never quoting a parameter value.
import type { Document } from 'yaml';
import { parseGoBool } from '../../lib/flags.js';
import { pathProblem } from '../../lib/provider-file-path.js';
import { quoted } from '../../lib/untrusted-text.js';
import {
  describeNode,
  goString,
  goUnsigned,
  mapEntries,
  NOT_A_SCALAR,
  parseYamlList,
  resolveAlias,
} from '../framework/go-yaml.js';
import { invalidParameter } from './exec-errors.js';

/** A helper's file name: letters, digits, `.`, `_`, `-`; never `.` or `..`, never a path. */
export const HELPER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** A parameter's name, which becomes `SSC_PARAM_<UPPER_SNAKE_NAME>` in the helper's environment. */
export const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Most entries of `objects`: each runs a helper at least once per Mount. */
export const MAX_OBJECTS = 100;
/** Most parameters of one object. */
export const MAX_PARAMETERS = 32;
/** Longest parameter value in bytes (the environment of an exec(2) is bounded too). */
export const MAX_PARAMETER_VALUE_BYTES = 16 * 1024;

/** One entry of `objects`: a file in the volume, written from one helper's stdout. */
export interface ExecObject {
  /** The file's path in the volume, the object's id, and the helper's second argument. */
  readonly objectName: string;
  /** The helper's file name in --helpers-dir. */
  readonly helper: string;
  /** Parameters as [name, value], in order; passed as SSC_PARAM_* variables. */
  readonly parameters: readonly (readonly [string, string])[];
  /** File mode; undefined means the Mount's permission. */
  readonly filePermission: number | undefined;
}

/** The exec parameters of a class. */
export interface ExecClassParameters {
  readonly objects: readonly ExecObject[];
  /** `passServiceAccountTokens: "true"`: the pod's tokens go to the helpers as SSC_SERVICE_ACCOUNT_TOKENS. */
  readonly passServiceAccountTokens: boolean;
  /** Unknown fields that were ignored, for the log. */
  readonly warnings: readonly string[];
}

const FIELDS = new Set(['objectName', 'helper', 'parameters', 'filePermission']);

/**
 * `name` as an environment variable: camelCase split into words, upper-cased, after
 * `SSC_PARAM_` (`path` → `SSC_PARAM_PATH`, `vaultAddr` → `SSC_PARAM_VAULT_ADDR`,
 * `VAULT_ADDR` → `SSC_PARAM_VAULT_ADDR`).
 */
export function parameterVariable(name: string): string {
  return `SSC_PARAM_${name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/** Why `name` cannot name a helper, or undefined. */
export function helperNameProblem(name: string): string | undefined {
  if (name === '.' || name === '..') return 'must be a file name, not "." or ".."';
  if (!HELPER_NAME.test(name)) return 'must be a file name in --helpers-dir: 1 to 64 of A-Z a-z 0-9 . _ - (no "/")';
  return undefined;
}

function fieldName(index: number, objectName: string | undefined, field: string): string {
  return `objects[${index}]${objectName === undefined ? '' : ` (${quoted(objectName, 64)})`}.${field}`;
}

function stringField(node: unknown, name: string): string | undefined {
  const value = goString(node);
  if (value === NOT_A_SCALAR) throw invalidParameter(`${name} must be a string, not ${describeNode(node)}`);
  return value === '' ? undefined : value;
}

function parseParameters(node: unknown, doc: Document, field: (f: string) => string): [string, string][] {
  if (node === undefined || describeNode(node) === 'null') return [];
  const entries = mapEntries(node, doc);
  if (!entries)
    throw invalidParameter(`${field('parameters')} must be a map of names to strings, not ${describeNode(node)}`);
  if (entries.length > MAX_PARAMETERS)
    throw invalidParameter(
      `${field('parameters')} has ${entries.length} entries; at most ${MAX_PARAMETERS} are allowed`,
    );
  const variables = new Map<string, string>();
  return entries.map(([name, valueNode]) => {
    const where = field(`parameters.${name}`);
    if (!PARAMETER_NAME.test(name))
      throw invalidParameter(
        `${field('parameters')} has a name ${quoted(name, 64)} that is not ^[A-Za-z_][A-Za-z0-9_]{0,63}$`,
      );
    const variable = parameterVariable(name);
    const other = variables.get(variable);
    if (other !== undefined)
      throw invalidParameter(
        `${field('parameters')}: ${quoted(other, 64)} and ${quoted(name, 64)} both become ${variable}`,
      );
    variables.set(variable, name);
    const value = goString(valueNode);
    if (value === NOT_A_SCALAR) throw invalidParameter(`${where} must be a string, not ${describeNode(valueNode)}`);
    const text = value ?? '';
    // The value is never shown: it may be a credential.
    if (text.includes('\0'))
      throw invalidParameter(`${where} holds a NUL character, which an environment variable cannot carry`);
    if (Buffer.byteLength(text) > MAX_PARAMETER_VALUE_BYTES)
      throw invalidParameter(`${where} is longer than ${MAX_PARAMETER_VALUE_BYTES} bytes`);
    return [name, text];
  });
}

function parseObject(entry: unknown, index: number, doc: Document, warnings: string[]): ExecObject {
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
      warnings.push(`${field(key === '' ? '(key)' : key)} is not a field of an exec object; ignored`);
  const helper = stringField(fields.get('helper'), field('helper'));
  if (helper === undefined)
    throw invalidParameter(`${field('helper')} is required: the file name of a helper in --helpers-dir`);
  const helperProblem = helperNameProblem(helper);
  if (helperProblem) throw invalidParameter(`${field('helper')} ${quoted(helper, 64)} ${helperProblem}`);
  const mode = goUnsigned(fields.get('filePermission'));
  if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o777)) {
    throw invalidParameter(
      `${field('filePermission')} must be a file mode from 0 to 0777, such as 0600 (octal) or 384`,
    );
  }
  return {
    objectName,
    helper,
    parameters: parseParameters(fields.get('parameters'), doc, field),
    // 0 is "unset", as in the vault provider: the Mount's permission applies.
    filePermission: mode === 0 ? undefined : mode,
  };
}

/**
 * Reads the exec parameters from a Mount's attributes. Throws INVALID_ARGUMENT
 * (`InvalidParameters`) naming the parameter, and the object by index and objectName.
 */
export function parseExecParameters(attributes: Readonly<Record<string, string>>): ExecClassParameters {
  const pass = attributes['passServiceAccountTokens'];
  const passServiceAccountTokens = pass === undefined || pass === '' ? false : parseGoBool(pass);
  if (passServiceAccountTokens === undefined)
    throw invalidParameter(`passServiceAccountTokens must be "true" or "false", not ${quoted(pass ?? '', 16)}`);
  const raw = attributes['objects'];
  if (raw === undefined || raw.trim() === '')
    throw invalidParameter('objects is required: a YAML list of objectName/helper entries');
  let parsed: { readonly doc: Document; readonly items: readonly unknown[] };
  try {
    parsed = parseYamlList(raw, 'objects', MAX_OBJECTS);
  } catch (err) {
    throw invalidParameter((err as Error).message);
  }
  const { doc } = parsed;
  const warnings: string[] = [];
  const seen = new Set<string>();
  const objects = parsed.items.map((item, i) => {
    const object = parseObject(resolveAlias(item, doc), i, doc, warnings);
    if (seen.has(object.objectName))
      throw invalidParameter(
        `objects[${i}].objectName ${quoted(object.objectName, 64)} is listed twice; each objectName must be unique`,
      );
    seen.add(object.objectName);
    return object;
  });
  return { objects, passServiceAccountTokens, warnings };
}
