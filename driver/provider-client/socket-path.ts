import { join } from 'node:path';
import { SscError } from '../../lib/errors.js';

/** Upstream's rule for provider names; anything else could escape the socket directory. */
const PROVIDER_NAME = /^[a-zA-Z0-9_-]{0,30}$/;

/** Throws invalid-argument unless `name` is a valid provider name (and not empty). */
export function assertProviderName(name: string): void {
  if (name === '' || !PROVIDER_NAME.test(name)) {
    throw new SscError(
      'invalid-argument',
      `provider name ${JSON.stringify(name.slice(0, 64))} is invalid: it must match ^[a-zA-Z0-9_-]{1,30}$`,
      { reason: 'InvalidProviderName' },
    );
  }
}

/** The socket paths to try for a provider, in search order (`<dir>/<provider>.sock`). */
export function candidateSocketPaths(name: string, dirs: readonly string[]): string[] {
  assertProviderName(name);
  return dirs.map((dir) => join(dir, `${name}.sock`));
}
