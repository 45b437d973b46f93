import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../proto/runtime/errors.js';
import { assertValidPaths } from '../volume/path-rules.js';
import type { ObjectVersion, PayloadFile } from '../volume/payload.js';

/** A provider response that passed every check: files to write and object versions. */
export interface ValidMount {
  readonly files: ReadonlyMap<string, PayloadFile>;
  readonly versions: readonly ObjectVersion[];
}

function invalid(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidProviderResponse' });
}

/**
 * Checks a MountResponse and turns it into files to write (SPEC 3.2, 5.5). Rejects the
 * whole response on a provider error code, no object versions, an object without id,
 * a bad path (too long for `targetPath` too), a duplicate path or a mode outside 0..0777.
 * Mode 0 means `defaultMode`.
 */
export function validateMountResponse(response: MountResponse__Output, defaultMode: number, targetPath?: string): ValidMount {
  const code = response.error?.code ?? '';
  if (code !== '') {
    throw new SscError('failed-precondition', `provider reported error code ${JSON.stringify(code.slice(0, 100))}`, { reason: code.replace(/[^A-Za-z0-9_]/g, '').slice(0, 64) || 'ProviderError' });
  }
  if (response.object_version.length === 0) throw invalid('provider returned no object versions');
  const ids = new Set<string>();
  for (const v of response.object_version) {
    if (v.id === '') throw invalid('provider returned an object version with an empty id');
    if (ids.has(v.id)) throw invalid(`provider returned object ${JSON.stringify(v.id)} more than once`);
    ids.add(v.id);
  }
  assertValidPaths(response.files.map((f) => f.path), targetPath);
  const files = new Map<string, PayloadFile>();
  for (const f of response.files) {
    if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o777) {
      throw invalid(`provider returned mode ${f.mode} for ${JSON.stringify(f.path)}: only permission bits 0000-0777 are allowed`);
    }
    files.set(f.path, { mode: f.mode === 0 ? defaultMode : f.mode, contents: Buffer.from(f.contents) });
  }
  return { files, versions: response.object_version.map((v) => ({ id: v.id, version: v.version })) };
}
