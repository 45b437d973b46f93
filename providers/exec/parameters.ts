// SecretProviderClass parameters of the exec provider (docs/providers/exec.md):
// `objects`, a YAML list of {objectName, helper, parameters, filePermission}, read
// bounded (framework go-yaml.ts), and `passServiceAccountTokens`. Pure: every problem
// is INVALID_ARGUMENT naming the field, never quoting a parameter value.
import type { Document } from 'yaml';
import { quoted } from '../../lib/untrusted-text.js';
import { describeNode, goString, mapEntries, NOT_A_SCALAR } from '../framework/go-yaml.js';
import {
  filePermissionField,
  parseObjectList,
  readObjectEntry,
  type ObjectListRules,
} from '../framework/object-list.js';
import { goBoolParameter } from '../framework/parameter-errors.js';
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

const RULES: ObjectListRules = { invalid: invalidParameter, known: FIELDS, kind: 'an exec object' };

function parseObject(raw: unknown, index: number, doc: Document, warnings: string[]): ExecObject {
  const entry = readObjectEntry(raw, index, doc, RULES, warnings);
  const { objectName, field } = entry;
  const helper = entry.string('helper');
  if (helper === undefined)
    throw invalidParameter(`${field('helper')} is required: the file name of a helper in --helpers-dir`);
  const helperProblem = helperNameProblem(helper);
  if (helperProblem) throw invalidParameter(`${field('helper')} ${quoted(helper, 64)} ${helperProblem}`);
  return {
    objectName,
    helper,
    parameters: parseParameters(entry.fields.get('parameters'), doc, field),
    filePermission: filePermissionField(entry, invalidParameter),
  };
}

/**
 * Reads the exec parameters from a Mount's attributes. Throws INVALID_ARGUMENT
 * (`InvalidParameters`) naming the parameter, and the object by index and objectName.
 */
export function parseExecParameters(attributes: Readonly<Record<string, string>>): ExecClassParameters {
  const pass = attributes['passServiceAccountTokens'];
  const passServiceAccountTokens =
    pass === undefined || pass === '' ? false : goBoolParameter(pass, 'passServiceAccountTokens', invalidParameter);
  const warnings: string[] = [];
  const required = 'objects is required: a YAML list of objectName/helper entries';
  const objects = parseObjectList(attributes['objects'], MAX_OBJECTS, { ...RULES, required }, (entry, i, doc) =>
    parseObject(entry, i, doc, warnings),
  );
  return { objects, passServiceAccountTokens, warnings };
}
