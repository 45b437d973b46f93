// The files of one planned entry from what was read: the framework's ProviderFiles, each
// object's filePermission or the Mount's permission (never mode 0: upstream's Go driver
// writes 0 as is, mode 000). Two objects whose files collide
// (an alias equal to another object's `.crt`/`.key` under
// --write-cert-and-key-in-separate-files) are refused here, where the flag is known.
import { quoted } from '../../lib/untrusted-text.js';
import type { ProviderFile } from '../framework/provider.js';
import type { CertificateRead, KeyRead, SecretRead } from './keyvault-reader.js';
import type { PlannedEntry } from './mount-plan.js';
import {
  describeObject,
  renderCertificate,
  renderKey,
  renderSecret,
  type RenderedContent,
  type RenderOptions,
} from './render.js';
import { invalidParameter } from './azure-errors.js';

/** What was read for one entry, by object type. */
export type FetchedObject =
  | ({ readonly kind: 'secret' } & SecretRead)
  | ({ readonly kind: 'key' } & KeyRead)
  | ({ readonly kind: 'cert' } & CertificateRead);

/** The rendered contents of `entry` from `fetched`. */
export function renderEntry(entry: PlannedEntry, fetched: FetchedObject, options: RenderOptions): RenderedContent[] {
  const what = describeObject(entry.object, fetched.version);
  switch (fetched.kind) {
    case 'secret':
      return renderSecret(
        entry.object,
        { value: fetched.value, contentType: fetched.contentType, certificateBacked: (fetched.keyId ?? '') !== '' },
        options,
        what,
      );
    case 'key':
      return renderKey(fetched.jwk, what);
    case 'cert':
      return renderCertificate(fetched.cer);
  }
}

/** ProviderFiles of every entry, each with its filePermission or `permission` (the Mount's); refuses a path written twice. */
export function mountFiles(
  entries: readonly { entry: PlannedEntry; contents: readonly RenderedContent[] }[],
  permission: number,
): ProviderFile[] {
  const files: ProviderFile[] = [];
  const owners = new Map<string, string>();
  for (const { entry, contents } of entries) {
    for (const c of contents) {
      const path = `${entry.fileName}${c.suffix}`;
      const owner = owners.get(path);
      if (owner !== undefined && owner !== entry.id) {
        throw invalidParameter(
          `objects ${quoted(owner, 140)} and ${quoted(entry.id, 140)} both write ${quoted(path, 140)} ` +
            `(objectAlias, or the .crt/.key files of --write-cert-and-key-in-separate-files)`,
        );
      }
      owners.set(path, entry.id);
      files.push({ path, mode: entry.object.filePermission ?? permission, contents: c.bytes });
    }
  }
  return files;
}
