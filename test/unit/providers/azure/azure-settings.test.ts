import { expect } from 'chai';
import { parseFlags } from '../../../../lib/flags.js';
import { commonProviderFlags } from '../../../../providers/framework/run-provider.js';
import { connectTarget, parseConnectTo } from '../../../../providers/azure/connect-to.js';
import { azureHealthAddress, azureProviderFlags, azureSettings } from '../../../../providers/azure/settings.js';

const specs = { ...commonProviderFlags('azure'), ...azureProviderFlags };
const parse = (argv: string[]) => parseFlags(argv, specs);

describe('azure provider settings', () => {
  it("takes upstream's DaemonSet arguments unchanged", () => {
    const flags = parse([
      '--endpoint=unix:///provider/azure.sock',
      '--construct-pem-chain=true',
      '--write-cert-and-key-in-separate-files=false',
      '--healthz-port=8989',
      '--healthz-path=/healthz',
      '--healthz-timeout=5s',
      '-v=2',
      '--log-format-json',
      '--metrics-backend=Prometheus',
      '--prometheus-port=8898',
    ]);
    const settings = azureSettings(flags);
    expect(settings).to.include({
      constructPemChain: true,
      writeCertAndKeyInSeparateFiles: false,
      cloudName: 'AzurePublicCloud',
      readCacheWindowMs: 5000,
    });
    expect(azureHealthAddress(flags)).to.equal(':8989');
    expect(flags.ignoredGiven).to.deep.equal([
      'healthz-timeout',
      'v',
      'log-format-json',
      'metrics-backend',
      'prometheus-port',
    ]);
  });

  it('--health-addr wins over --healthz-port; neither given: no health server', () => {
    expect(azureHealthAddress(parse(['--healthz-port=8989', '--health-addr=127.0.0.1:0']))).to.equal('127.0.0.1:0');
    expect(azureHealthAddress(parse([]))).to.equal('');
  });

  const bad: [string, string[], RegExp][] = [
    ['a health path other than /healthz', ['--healthz-path=/live'], /--healthz-path: only \/healthz/],
    ['a bad read window', ['--read-cache-window=5'], /--read-cache-window/],
    ['a window over 1h', ['--read-cache-window=2h'], /between 0 and 1h/],
    ['a bad cache size', ['--identity-cache-size=-1'], /--identity-cache-size must be a whole number/],
    ['a bad connect-to rule', ['--test-only-connect-to=vault.azure.net=127.0.0.1:1'], /--test-only-connect-to/],
  ];
  for (const [name, argv, message] of bad)
    it(`refuses ${name}`, () => {
      expect(() => azureSettings(parse(argv))).to.throw(message);
    });

  it('refuses a bad --healthz-port', () => {
    expect(() => azureHealthAddress(parse(['--healthz-port=http']))).to.throw(/--healthz-port/);
  });

  it('connect-to rules map exactly the named host and port', () => {
    const rules = parseConnectTo('kv1.vault.azure.net:443=127.0.0.1:4000, LOGIN.microsoftonline.com:443=[::1]:4001');
    expect(connectTarget(rules, 'kv1.vault.azure.net', 443)).to.deep.equal({ host: '127.0.0.1', port: 4000 });
    expect(connectTarget(rules, 'login.microsoftonline.com', 443)).to.deep.equal({ host: '::1', port: 4001 });
    expect(connectTarget(rules, 'kv1.vault.azure.net', 8443)).to.deep.equal({
      host: 'kv1.vault.azure.net',
      port: 8443,
    });
    expect(connectTarget(rules, 'kv2.vault.azure.net', 443)).to.deep.equal({ host: 'kv2.vault.azure.net', port: 443 });
    expect(parseConnectTo('')).to.deep.equal([]);
  });
});
