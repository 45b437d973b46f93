// The exec and pki providers' flag tables, as docs/issue 14's decisions name them and
// their branches define them (providers/exec/settings.ts execProviderFlags,
// providers/pki/settings.ts pkiProviderFlags), for the deploy and chart tests until those
// providers are on main. Once they are: import the real tables in
// exec-provider-daemonset.ts and pki-provider-daemonset.ts and delete this file.
import type { FlagSpec } from '../../proto/runtime/flags.js';

/** The exec provider's own flags (on top of the framework's common ones). */
export const execProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'helpers-dir': { type: 'string', default: '', help: 'directory holding the helper executables (required)' },
  'helper-timeout': { type: 'string', default: '10s', help: 'longest one helper call may run (Go duration)' },
  'max-output-bytes': { type: 'string', default: '1048576', help: 'most bytes a helper call may print' },
  'max-concurrent-helpers': { type: 'string', default: '8', help: 'most helper processes at once' },
  'hmac-key-file': { type: 'string', default: '', help: 'key for digest versions' },
};

/** The pki provider's own flags (on top of the framework's common ones). */
export const pkiProviderFlags: Readonly<Record<string, FlagSpec>> = {
  'min-duration': { type: 'string', default: '1h', help: 'the shortest certificate duration a class may ask for (Go duration)' },
};
