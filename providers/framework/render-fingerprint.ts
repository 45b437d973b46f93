// Whether a rotation may answer "unchanged" (no files, exactly the mounted versions:
// the driver then keeps the mounted files) depends on more than versions: the same
// versions rendered under an edited class (an alias, an encoding, a mode) are other files.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { entryBound } from './lru-options.js';
import type { ProviderMountRequest } from './provider.js';
import { TOKENS_ATTRIBUTE } from './sa-token.js';

/** Targets whose last rendering a provider remembers; a forgotten one is read and written anew. */
export const REMEMBERED_TARGETS = 10_000;

/**
 * A digest of everything that shapes a Mount's files besides the store's versions: the
 * class parameters and volume attributes (tokens left out: they change every Mount)
 * and the default mode. A provider may answer "unchanged" from versions only when this
 * is what the target was last answered with: an edited class must be read and written anew.
 */
export function renderFingerprint(attributes: Readonly<Record<string, string>>, permission: number): string {
  const entries = Object.entries(attributes)
    .filter(([k]) => k !== TOKENS_ATTRIBUTE)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([entries, permission]))
    .digest('hex');
}

/** A Mount's rendering fingerprint, and whether its target was last answered with the same one. */
export interface RenderingCheck {
  readonly fingerprint: string;
  readonly sameRendering: boolean;
}

/**
 * The rendering fingerprint each target was last answered with, for at most
 * REMEMBERED_TARGETS targets (least recently used forgotten first).
 */
export class TargetRenderings {
  readonly #byTarget = new LRUCache<string, string>(entryBound(REMEMBERED_TARGETS));

  /** `request`'s fingerprint, and whether it is what its target was last answered with. */
  check(request: ProviderMountRequest): RenderingCheck {
    const fingerprint = renderFingerprint(request.attributes, request.permission);
    return { fingerprint, sameRendering: this.#byTarget.get(request.targetPath) === fingerprint };
  }

  /** Records that `targetPath` was answered with `fingerprint`: call once the Mount succeeded. */
  answered(targetPath: string, fingerprint: string): void {
    this.#byTarget.set(targetPath, fingerprint);
  }
}
