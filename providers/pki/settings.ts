// Flags of the pki provider.
import { isAbsolute } from 'node:path';
import { parseDurationFlag } from '../../lib/duration.js';
import { stringFlag, type FlagSpec, type ParsedFlags } from '../../lib/flags.js';

/** Default of --min-duration. */
export const DEFAULT_MIN_DURATION = '1h';

/** Flags of the pki provider (on top of the framework's common ones). */
export const pkiProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'min-duration': {
    type: 'string',
    default: DEFAULT_MIN_DURATION,
    help: 'the shortest certificate duration a class may ask for (Go duration, 1s to 8760h); lower it only for tests or short-lived workloads',
  },
  'ca-dir': {
    type: 'string',
    default: '',
    help:
      'directory of per-namespace CAs, <dir>/<namespace>/ca.crt and ca.key, for a Mount without a ' +
      'nodePublishSecretRef CA (the SecretSync controller sends none); empty: off',
  },
};

/** The provider's settings, parsed once at start. */
export interface PkiSettings {
  readonly minDurationSeconds: number;
  /** --ca-dir, when set. */
  readonly caDir?: string;
}

/** Settings from parsed flags; throws an Error naming the flag on a bad value. */
export function pkiSettings(flags: ParsedFlags): PkiSettings {
  const ms = parseDurationFlag('min-duration', stringFlag(flags, 'min-duration'), {
    example: '1h',
    min: [1000, '1s'],
    max: [365 * 24 * 3_600_000, '8760h'],
  });
  const caDir = stringFlag(flags, 'ca-dir');
  if (caDir !== '' && !isAbsolute(caDir)) throw new Error(`--ca-dir "${caDir}" must be an absolute path`);
  return Object.freeze({ minDurationSeconds: Math.floor(ms / 1000), ...(caDir !== '' ? { caDir } : {}) });
}
