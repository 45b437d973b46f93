import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { SscError } from '../../lib/errors.js';
import { quoted } from '../../lib/untrusted-text.js';
import type { Pacer } from '../../lib/pacer.js';
import { PathSetChecker, quotePath } from '../volume/path-rules.js';
import type { ObjectVersion, PayloadFile } from '../volume/payload.js';

/** A provider response that passed every check: files to write and object versions. */
export interface ValidMount {
  /** A new map, the caller's to extend (the publisher adds `.metadata`). */
  readonly files: Map<string, PayloadFile>;
  readonly versions: readonly ObjectVersion[];
}

/**
 * A provider error code fit to be a metric label and event reason: an identifier of at
 * most 40 characters. Anything else (free text, a value that leaked in) would bring
 * unbounded label values and could carry secrets, so it is never used.
 */
const LABEL_SAFE_CODE = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;

/**
 * Reasons the driver acts on (a publish already running, a cancelled call): a provider
 * returning one as its error code must not make the driver skip reporting its failure.
 */
const DRIVER_DECISION_REASONS: ReadonlySet<string> = new Set(['OperationInProgress', 'Cancelled']);

/** Longest part of a provider's error code or object id quoted in a message. */
const MAX_TEXT_SHOWN = 64;

/**
 * The `reason` (metric `error_type`) for a provider's `error.code`: the code
 * itself when it is a short identifier, else `ProviderError`.
 */
export function providerCodeReason(code: string): string {
  return LABEL_SAFE_CODE.test(code) && !DRIVER_DECISION_REASONS.has(code) ? code : 'ProviderError';
}

function invalid(message: string): SscError {
  return new SscError('invalid-argument', message, { reason: 'InvalidProviderResponse' });
}

/**
 * Checks a MountResponse and turns it into files to write. Rejects the
 * whole response on a provider error code, no object versions, an object without id,
 * a bad path (too long for `targetPath` too), a duplicate path or a mode outside 0..0777.
 * Mode 0 means `defaultMode`. With a pacer, a response of many files gives the event
 * loop back every few milliseconds.
 */
export async function validateMountResponse(
  response: MountResponse__Output,
  defaultMode: number,
  targetPath?: string,
  pacer?: Pacer,
): Promise<ValidMount> {
  const code = response.error?.code ?? '';
  if (code !== '') {
    throw new SscError('failed-precondition', `provider reported error code ${quoted(code, MAX_TEXT_SHOWN)}`, {
      reason: providerCodeReason(code),
    });
  }
  if (response.object_version.length === 0) throw invalid('provider returned no object versions');
  const ids = new Set<string>();
  for (const v of response.object_version) {
    if (v.id === '') throw invalid('provider returned an object version with an empty id');
    if (ids.has(v.id)) throw invalid(`provider returned object ${quoted(v.id, MAX_TEXT_SHOWN)} more than once`);
    ids.add(v.id);
    if (pacer?.due()) await pacer.pause();
  }
  const paths = new PathSetChecker(targetPath);
  const files = new Map<string, PayloadFile>();
  for (const f of response.files) {
    paths.add(f.path);
    if (!Number.isInteger(f.mode) || f.mode < 0 || f.mode > 0o777) {
      throw invalid(
        `provider returned mode ${f.mode} for ${quotePath(f.path)}: only permission bits 0000-0777 are allowed`,
      );
    }
    files.set(f.path, { mode: f.mode === 0 ? defaultMode : f.mode, contents: f.contents });
    if (pacer?.due()) await pacer.pause();
  }
  return { files, versions: response.object_version.map((v) => ({ id: v.id, version: v.version })) };
}

/**
 * True when a response carries no files and exactly the object versions already mounted
 * (same ids, same versions): the provider saw that nothing changed and did not download
 * the values again (the azure provider's rotation answers from version properties). The
 * mounted files stay as they are. Upstream v1.6.1 keeps the mounted files whenever a
 * response has no files (provider_client.go, issue #551); we do so only when the versions
 * prove the content is the same, and otherwise write what the response says.
 */
export function keepsMountedFiles(
  fileCount: number,
  versions: readonly ObjectVersion[],
  mounted: readonly ObjectVersion[],
): boolean {
  if (fileCount !== 0 || mounted.length === 0 || versions.length !== mounted.length) return false;
  const byId = new Map(mounted.map((v) => [v.id, v.version]));
  return versions.every((v) => byId.get(v.id) === v.version);
}
