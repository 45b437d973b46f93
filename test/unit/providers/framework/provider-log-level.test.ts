import { expect } from 'chai';
import { parseFlags } from '../../../../lib/flags.js';
import { commonProviderFlags } from '../../../../providers/framework/run-provider.js';
import { providerLogLevel } from '../../../../providers/framework/log-level.js';
import { vaultProviderFlags } from '../../../../providers/vault/settings.js';

const vaultSpecs = { ...commonProviderFlags('vault'), ...vaultProviderFlags };

describe('providerLogLevel', () => {
  const cases: [string[], string][] = [
    [[], 'info'],
    [['--log-level=warn'], 'warn'],
    [['-log-level=trace'], 'debug'],
    [['--log-level=off'], 'error'],
    [['--debug'], 'debug'],
    [['-debug=true'], 'debug'],
    [['--debug=false'], 'info'],
    [['--debug', '--log-level=error'], 'error'],
    [['--log-level=info', '--debug'], 'info'],
  ];
  for (const [argv, want] of cases) {
    it(`${argv.join(' ') || '(none)'} → ${want}`, () =>
      expect(providerLogLevel(parseFlags(argv, vaultSpecs))).to.equal(want));
  }

  it('refuses an unknown level naming the flag and every accepted value', () => {
    expect(() => providerLogLevel(parseFlags(['--log-level=verbose'], vaultSpecs))).to.throw(
      '--log-level must be one of error, warn, info, debug, trace, off, got "verbose"',
    );
  });

  it('a provider that does not declare --debug refuses it', () => {
    expect(() => parseFlags(['--debug'], commonProviderFlags('file'))).to.throw('unknown flag --debug');
  });
});
