import type { MountRequest__Output } from '../../proto/gen/v1alpha1/MountRequest.js';
import { SscError } from '../../lib/errors.js';
import type { ProviderMountRequest } from './provider.js';

function invalid(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidMountRequest' });
}

/**
 * `optional` fields may be absent: `""` (our driver before it sent `{}`) or `null`, which
 * the Go driver v1.6.1 sends for a pod without nodePublishSecretRef (json.Marshal of a
 * nil map), so every such mount fails unless `null` means "none", as in Go providers.
 */
function jsonStringMap(field: string, raw: string, optional: boolean): Record<string, string> {
  if (raw === '' && optional) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalid(`${field} is not valid JSON`);
  }
  if (value === null && optional) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(`${field} must be a JSON object`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw invalid(`${field}.${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/**
 * Parses the JSON-in-string fields of a v1alpha1 MountRequest. Errors name the field
 * and never echo values (`secrets` holds credentials).
 */
export function parseMountRequest(raw: MountRequest__Output): ProviderMountRequest {
  // attributes stay required: the Go driver refuses a class without parameters before
  // calling, so it never sends `null` there, and a provider cannot work without them.
  const attributes = jsonStringMap('attributes', raw.attributes, false);
  const secrets = jsonStringMap('secrets', raw.secrets, true);
  if (raw.target_path === '') throw invalid('targetPath is required');
  let permission: unknown;
  try {
    permission = JSON.parse(raw.permission);
  } catch {
    permission = undefined;
  }
  if (typeof permission !== 'number' || !Number.isInteger(permission) || permission < 0 || permission > 0o777) {
    throw invalid('permission must be a JSON number such as "420" (0644), between 0 and 511 (0777)');
  }
  const currentObjectVersions = new Map<string, string>();
  for (const v of raw.current_object_version) currentObjectVersions.set(v.id, v.version);
  return { attributes, secrets, targetPath: raw.target_path, permission, currentObjectVersions };
}
