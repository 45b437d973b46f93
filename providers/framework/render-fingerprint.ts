// Whether a rotation may answer "unchanged" (no files, exactly the mounted versions:
// the driver then keeps the mounted files) depends on more than versions: the same
// versions rendered under an edited class (an alias, an encoding, a mode) are other files.
import { createHash } from 'node:crypto';
import { TOKENS_ATTRIBUTE } from './sa-token.js';

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
