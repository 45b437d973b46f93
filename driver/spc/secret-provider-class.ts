import { SscError } from '../../lib/errors.js';
import { pathProblem } from '../volume/path-rules.js';

/** One key of a synced Secret: which mounted file feeds which data key. */
export interface SecretObjectData {
  readonly objectName: string;
  readonly key: string;
}

/** A `spec.secretObjects[]` entry: a Kubernetes Secret built from mounted files. */
export interface SecretObject {
  readonly secretName: string;
  readonly type: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly data: readonly SecretObjectData[];
}

/** The parts of a SecretProviderClass the driver uses. */
export interface SecretProviderClass {
  readonly namespace: string;
  readonly name: string;
  readonly provider: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly secretObjects: readonly SecretObject[];
  readonly annotations: Readonly<Record<string, string>>;
}

/** API group and kind accepted (v1 and the deprecated v1alpha1 share the schema). */
export const SPC_API_GROUP = 'secrets-store.csi.x-k8s.io';
export const SPC_KIND = 'SecretProviderClass';

function bad(where: string, message: string): SscError {
  return new SscError('invalid-argument', `SecretProviderClass ${where}: ${message}`, {
    reason: 'InvalidSecretProviderClass',
  });
}

function stringMap(value: unknown, where: string, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw bad(where, `${field} must be a map of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw bad(where, `${field}.${k} must be a string (quote numbers and booleans in YAML)`);
    out[k] = v;
  }
  return out;
}

function parseSecretObjects(value: unknown, where: string): SecretObject[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(where, 'spec.secretObjects must be a list');
  return value.map((raw: unknown, i): SecretObject => {
    const field = `spec.secretObjects[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw bad(where, `${field} must be an object`);
    const o = raw as Record<string, unknown>;
    if (typeof o['secretName'] !== 'string' || o['secretName'] === '')
      throw bad(where, `${field}.secretName is required`);
    if (o['type'] !== undefined && typeof o['type'] !== 'string') throw bad(where, `${field}.type must be a string`);
    const data = o['data'] ?? [];
    if (!Array.isArray(data)) throw bad(where, `${field}.data must be a list`);
    return {
      secretName: o['secretName'],
      type: typeof o['type'] === 'string' && o['type'] !== '' ? o['type'] : 'Opaque',
      labels: stringMap(o['labels'], where, `${field}.labels`),
      annotations: stringMap(o['annotations'], where, `${field}.annotations`),
      data: data.map((d: unknown, j): SecretObjectData => {
        const df = `${field}.data[${j}]`;
        const e = (typeof d === 'object' && d !== null ? d : {}) as Record<string, unknown>;
        // Surrounding spaces are dropped, as upstream's GetSecretData does (strings.TrimSpace).
        const objectName = typeof e['objectName'] === 'string' ? e['objectName'].trim() : '';
        if (objectName === '') throw bad(where, `${df}.objectName is required`);
        // objectName names a file inside the mounted volume; anything else could read the node's files.
        const problem = pathProblem(objectName);
        if (problem)
          throw bad(
            where,
            `${df}.objectName ${JSON.stringify(objectName.slice(0, 100))} is not a path inside the volume: ${problem}`,
          );
        const key = typeof e['key'] === 'string' ? e['key'].trim() : '';
        if (key === '') throw bad(where, `${df}.key is required`);
        return { objectName, key };
      }),
    };
  });
}

/**
 * Validates a SecretProviderClass object (as read from YAML or the API) and returns
 * the driver's view of it. Errors name the class and the field.
 */
export function parseSecretProviderClass(obj: unknown, defaultNamespace = 'default'): SecretProviderClass {
  if (typeof obj !== 'object' || obj === null) throw bad('(unnamed)', 'not an object');
  const o = obj as Record<string, unknown>;
  const meta = (o['metadata'] ?? {}) as Record<string, unknown>;
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  const namespace =
    typeof meta['namespace'] === 'string' && meta['namespace'] !== '' ? meta['namespace'] : defaultNamespace;
  const where = `${namespace}/${name || '(unnamed)'}`;
  if (name === '') throw bad(where, 'metadata.name is required');
  const apiVersion = typeof o['apiVersion'] === 'string' ? o['apiVersion'] : '';
  if (o['kind'] !== SPC_KIND || !apiVersion.startsWith(`${SPC_API_GROUP}/`)) {
    throw bad(where, `expected kind ${SPC_KIND} in group ${SPC_API_GROUP}, got ${String(o['kind'])} ${apiVersion}`);
  }
  const spec = (o['spec'] ?? {}) as Record<string, unknown>;
  if (typeof spec['provider'] !== 'string' || spec['provider'] === '') throw bad(where, 'spec.provider is required');
  return {
    namespace,
    name,
    provider: spec['provider'],
    parameters: stringMap(spec['parameters'], where, 'spec.parameters'),
    secretObjects: parseSecretObjects(spec['secretObjects'], where),
    annotations: stringMap(meta['annotations'], where, 'metadata.annotations'),
  };
}
