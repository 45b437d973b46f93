import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { parseFlags } from '../../../../lib/flags.js';
import { commonProviderFlags } from '../../../../providers/framework/run-provider.js';
import { requirePodIdentity } from '../../../../providers/vault/parameters.js';
import {
  providerSettings,
  resolveSettings,
  vaultProviderFlags,
  type VaultMountConfig,
} from '../../../../providers/vault/settings.js';
import { NO_VAULT_TLS } from '../../../support/vault-fixtures.js';

const flagsOf = (argv: string[] = []) => parseFlags(argv, { ...commonProviderFlags('vault'), ...vaultProviderFlags });
const OBJECTS = '- objectName: a\n  secretPath: secret/a\n';
const POD = { 'csi.storage.k8s.io/pod.namespace': 'shop', 'csi.storage.k8s.io/serviceAccount.name': 'web' };
const CLASS = { roleName: 'app', objects: OBJECTS, ...POD };

function resolve(
  env: Record<string, string> = {},
  argv: string[] = [],
  params: Record<string, string> = {},
): VaultMountConfig {
  return resolveSettings(env, flagsOf(argv), { ...CLASS, ...params });
}

function classFailure(params: Record<string, string>): string {
  try {
    resolve({}, [], params);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal(['invalid-argument', 'InvalidParameters']);
    return (err as SscError).message;
  }
  throw new Error('expected the class to be rejected');
}

function startFailure(env: Record<string, string>, argv: string[] = []): string {
  try {
    providerSettings(env, flagsOf(argv));
  } catch (err) {
    expect(err).to.not.be.instanceOf(SscError);
    return (err as Error).message;
  }
  throw new Error('expected the provider settings to be rejected');
}

describe('vault resolveSettings', () => {
  it("with nothing set: Vault's default address, auth mount kubernetes, audience vault, TLS verified", () => {
    const config = resolveSettings({}, flagsOf(), {
      ...CLASS,
      'csi.storage.k8s.io/pod.name': 'web-0',
      'csi.storage.k8s.io/pod.namespace': 'shop',
      'csi.storage.k8s.io/pod.uid': 'u-1',
      'csi.storage.k8s.io/serviceAccount.name': 'web',
      secretProviderClass: 'vault-db',
    });
    expect({ ...config, objects: config.objects.length }).to.deep.equal({
      roleName: 'app',
      vaultAddress: 'https://127.0.0.1:8200',
      vaultNamespace: undefined,
      vaultAuthMountPath: 'kubernetes',
      audience: 'vault',
      tls: NO_VAULT_TLS,
      objects: 1,
      warnings: [],
      pod: { name: 'web-0', namespace: 'shop', uid: 'u-1', serviceAccountName: 'web' },
    });
  });

  // [setting, env, flags, class parameters, expected]: env < flags < class; '' is unset at every layer.
  type Row = [
    string,
    Record<string, string>,
    string[],
    Record<string, string>,
    (c: VaultMountConfig) => unknown,
    unknown,
  ];
  const addr = (c: VaultMountConfig) => c.vaultAddress;
  const ns = (c: VaultMountConfig) => c.vaultNamespace;
  const mount = (c: VaultMountConfig) => c.vaultAuthMountPath;
  const skip = (c: VaultMountConfig) => c.tls.skipVerify;
  const ca = (c: VaultMountConfig) => [c.tls.caCertPath, c.tls.caDirectory];
  const client = (c: VaultMountConfig) => [c.tls.clientCertPath, c.tls.clientKeyPath];
  const E = { VAULT_ADDR: 'http://env:8200' };
  const rows: Row[] = [
    ['address from env', E, [], {}, addr, 'http://env:8200'],
    ['address: flag over env', E, ['--vault-addr=http://flag:8200'], {}, addr, 'http://flag:8200'],
    [
      'address: class over flag and env',
      E,
      ['-vault-addr=http://flag:8200'],
      { vaultAddress: 'https://class:8200' },
      addr,
      'https://class:8200',
    ],
    [
      'address: empty flag and parameter are unset',
      E,
      ['--vault-addr='],
      { vaultAddress: '' },
      addr,
      'http://env:8200',
    ],
    ['namespace from env', { VAULT_NAMESPACE: 'env-ns' }, [], {}, ns, 'env-ns'],
    ['namespace: flag over env', { VAULT_NAMESPACE: 'env-ns' }, ['--vault-namespace=flag-ns'], {}, ns, 'flag-ns'],
    [
      'namespace: class over flag',
      { VAULT_NAMESPACE: 'env-ns' },
      ['--vault-namespace=flag-ns'],
      { vaultNamespace: 'team/a' },
      ns,
      'team/a',
    ],
    ['auth mount from the flag', {}, ['--vault-mount=jwt'], {}, mount, 'jwt'],
    [
      'auth mount: vaultAuthMountPath over the flag',
      {},
      ['--vault-mount=jwt'],
      { vaultAuthMountPath: 'k8s/cluster-1' },
      mount,
      'k8s/cluster-1',
    ],
    [
      'auth mount: the older vaultKubernetesMountPath',
      {},
      ['--vault-mount=jwt'],
      { vaultKubernetesMountPath: 'kube' },
      mount,
      'kube',
    ],
    ['auth mount: slashes at either end dropped', {}, [], { vaultAuthMountPath: '/jwt/' }, mount, 'jwt'],
    ['auth mount: an empty parameter is unset', {}, ['--vault-mount=jwt'], { vaultAuthMountPath: '' }, mount, 'jwt'],
    ['skip-verify from env', { VAULT_SKIP_VERIFY: 'true' }, [], {}, skip, true],
    [
      'skip-verify: flag false over env true',
      { VAULT_SKIP_VERIFY: '1' },
      ['--vault-tls-skip-verify=false'],
      {},
      skip,
      false,
    ],
    ['skip-verify: flag true', {}, ['--vault-tls-skip-verify'], {}, skip, true],
    [
      'skip-verify: class "false" turns verification back on',
      {},
      ['--vault-tls-skip-verify'],
      { vaultSkipTLSVerify: 'false' },
      skip,
      false,
    ],
    ['skip-verify: class "T" (Go ParseBool)', {}, [], { vaultSkipTLSVerify: 'T' }, skip, true],
    [
      'skip-verify: VAULT_SKIP_VERIFY=false means false (node-vault would skip)',
      { VAULT_SKIP_VERIFY: 'false' },
      [],
      {},
      skip,
      false,
    ],
    ['CA from env', { VAULT_CACERT: '/env/ca.pem', VAULT_CAPATH: '/env/cas' }, [], {}, ca, ['/env/ca.pem', '/env/cas']],
    [
      'CA: a flag directory replaces the env CA whole',
      { VAULT_CACERT: '/env/ca.pem' },
      ['--vault-tls-ca-directory=/flag/cas'],
      {},
      ca,
      [undefined, '/flag/cas'],
    ],
    [
      'CA: a class file replaces the flag CA whole',
      {},
      ['--vault-tls-ca-cert=/flag/ca.pem', '--vault-tls-ca-directory=/flag/cas'],
      { vaultCACertPath: '/class/ca.pem' },
      ca,
      ['/class/ca.pem', undefined],
    ],
    [
      'CA: class directory',
      {},
      ['--vault-tls-ca-cert=/flag/ca.pem'],
      { vaultCADirectory: '/class/cas' },
      ca,
      [undefined, '/class/cas'],
    ],
    [
      'server name: class over flag over env',
      { VAULT_TLS_SERVER_NAME: 'env' },
      ['--vault-tls-server-name=flag'],
      { vaultTLSServerName: 'class' },
      (c) => c.tls.serverName,
      'class',
    ],
    [
      'server name: flag over env',
      { VAULT_TLS_SERVER_NAME: 'env' },
      ['--vault-tls-server-name=flag'],
      {},
      (c) => c.tls.serverName,
      'flag',
    ],
    ['client pair from env', { VAULT_CLIENT_CERT: '/e/c', VAULT_CLIENT_KEY: '/e/k' }, [], {}, client, ['/e/c', '/e/k']],
    [
      'client pair: flags over env',
      { VAULT_CLIENT_CERT: '/e/c', VAULT_CLIENT_KEY: '/e/k' },
      ['--vault-tls-client-cert=/f/c', '--vault-tls-client-key=/f/k'],
      {},
      client,
      ['/f/c', '/f/k'],
    ],
    [
      'client pair: class over flags',
      {},
      ['--vault-tls-client-cert=/f/c', '--vault-tls-client-key=/f/k'],
      { vaultTLSClientCertPath: '/c/c', vaultTLSClientKeyPath: '/c/k' },
      client,
      ['/c/c', '/c/k'],
    ],
    ["audience: the class's", {}, [], { audience: 'openbao' }, (c) => c.audience, 'openbao'],
    ['audience: empty is "vault"', {}, [], { audience: '' }, (c) => c.audience, 'vault'],
  ];
  for (const [name, env, argv, params, pick, expected] of rows) {
    it(name, () => expect(pick(resolve(env, argv, params))).to.deep.equal(expected));
  }

  it('never reads environment variables it does not name (VAULT_TOKEN stays unused)', () => {
    const config = resolve({ VAULT_TOKEN: 'root', VAULT_ADDR: 'http://env:8200', HTTP_PROXY: 'http://proxy' });
    expect(JSON.stringify(config)).to.not.include('root').and.not.include('proxy');
  });

  const classErrors: [string, Record<string, string>, string][] = [
    ['no roleName', { roleName: '' }, 'vault provider: roleName is required: the Vault role to log in as'],
    [
      'both auth mount names',
      { vaultAuthMountPath: 'a', vaultKubernetesMountPath: 'b' },
      'vault provider: vaultAuthMountPath and vaultKubernetesMountPath are both set; set only vaultAuthMountPath (vaultKubernetesMountPath is its older name)',
    ],
    [
      'both auth mount names, one empty',
      { vaultAuthMountPath: '', vaultKubernetesMountPath: 'b' },
      'vault provider: vaultAuthMountPath and vaultKubernetesMountPath are both set; set only vaultAuthMountPath (vaultKubernetesMountPath is its older name)',
    ],
    [
      'an auth mount with ..',
      { vaultAuthMountPath: 'a/../b' },
      'vault provider: vaultAuthMountPath "a/../b" must be a mount path such as "kubernetes" or "k8s/cluster-1"',
    ],
    [
      'an auth mount with ?',
      { vaultKubernetesMountPath: 'k?x=1' },
      'vault provider: vaultKubernetesMountPath "k?x=1" must be a mount path such as "kubernetes" (no spaces, "?", "#" or "%")',
    ],
    [
      'an address that is no URL',
      { vaultAddress: 'vault:8200x' },
      'vault provider: vaultAddress must be an http:// or https:// URL',
    ],
    [
      'an address without scheme',
      { vaultAddress: 'notaurl' },
      'vault provider: vaultAddress must be a URL such as https://vault.example.com:8200',
    ],
    [
      'an address with credentials (never echoed)',
      { vaultAddress: 'https://user:s3cret@vault:8200' },
      'vault provider: vaultAddress must not hold credentials',
    ],
    [
      'an address with a query',
      { vaultAddress: 'https://vault:8200/?x=1' },
      'vault provider: vaultAddress must not have a query or fragment',
    ],
    [
      'an address with a newline (new URL would drop it)',
      { vaultAddress: 'https://vault:8200\n' },
      'vault provider: vaultAddress must not hold spaces or control characters',
    ],
    [
      'an address with a tab inside',
      { vaultAddress: 'https://va\tult:8200' },
      'vault provider: vaultAddress must not hold spaces or control characters',
    ],
    [
      'an address with a leading space',
      { vaultAddress: ' https://vault:8200' },
      'vault provider: vaultAddress must not hold spaces or control characters',
    ],
    [
      'a namespace with a newline',
      { vaultNamespace: 'a\nX-Evil: 1' },
      'vault provider: vaultNamespace must not hold control characters',
    ],
    [
      'vaultSkipTLSVerify yes',
      { vaultSkipTLSVerify: 'yes' },
      'vault provider: vaultSkipTLSVerify must be "true" or "false", not "yes"',
    ],
    [
      'a client cert without key',
      { vaultTLSClientCertPath: '/c' },
      'vault provider: vaultTLSClientKeyPath is required with vaultTLSClientCertPath: a client certificate needs its key',
    ],
    [
      'a client key without cert',
      { vaultTLSClientKeyPath: '/k' },
      'vault provider: vaultTLSClientCertPath is required with vaultTLSClientKeyPath: a client certificate needs its key',
    ],
    [
      'no objects',
      { objects: '' },
      'vault provider: objects is required: a YAML list of objectName/secretPath entries',
    ],
  ];
  for (const [name, params, message] of classErrors) {
    it(`rejects a class with ${name}`, () => expect(classFailure(params)).to.equal(message));
  }

  // Without them every pod would share the identity "/" and its Vault token.
  const podInfoErrors: [string, Record<string, string>, string][] = [
    ['no pod namespace', { 'csi.storage.k8s.io/pod.namespace': '' }, 'csi.storage.k8s.io/pod.namespace'],
    ['no service account', { 'csi.storage.k8s.io/serviceAccount.name': '' }, 'csi.storage.k8s.io/serviceAccount.name'],
  ];
  for (const [name, params, attribute] of podInfoErrors) {
    it(`a Mount with ${name} is FAILED_PRECONDITION naming ${attribute} and podInfoOnMount`, () => {
      const attributes: Record<string, string> = { ...CLASS, ...params };
      if (params[attribute] === '') delete attributes[attribute];
      for (const attrs of [attributes, { ...CLASS, ...params }]) {
        try {
          requirePodIdentity(resolveSettings({}, flagsOf(), attrs).pod);
          expect.fail('expected FAILED_PRECONDITION');
        } catch (err) {
          expect(err).to.be.instanceOf(SscError);
          expect([(err as SscError).kind, (err as SscError).reason]).to.deep.equal([
            'failed-precondition',
            'PodInfoMissing',
          ]);
          expect((err as SscError).message)
            .to.include(attribute)
            .and.include('podInfoOnMount: true');
        }
      }
    });
  }
});

describe('vault providerSettings', () => {
  it("reads --cache-size and --hmac-key-file, and accepts HashiCorp's -hmac-secret-name", () => {
    const s = providerSettings(
      {},
      flagsOf(['--cache-size=0', '--hmac-key-file=/etc/hmac/key', '-hmac-secret-name=vault-csi-provider-hmac-key']),
    );
    expect([s.cacheSize, s.hmacKeyFile]).to.deep.equal([0, '/etc/hmac/key']);
    expect(providerSettings({}, flagsOf()).cacheSize).to.equal(1000);
  });

  it('reads --vault-request-timeout (a Go duration, 10s by default) and --vault-max-response-bytes (4 MiB by default)', () => {
    const d = providerSettings({}, flagsOf());
    expect([d.requestTimeoutMs, d.maxResponseBytes]).to.deep.equal([10_000, 4 * 1024 * 1024]);
    const cases: [string[], number, number][] = [
      [['--vault-request-timeout=1s', '--vault-max-response-bytes=1048576'], 1000, 1048576],
      [['--vault-request-timeout=1m30s'], 90_000, 4194304],
      [['--vault-request-timeout=250ms', '--vault-max-response-bytes=1'], 250, 1],
      [['--vault-request-timeout=1.5s'], 1500, 4194304],
    ];
    for (const [argv, ms, bytes] of cases) {
      const s = providerSettings({}, flagsOf(argv));
      expect([s.requestTimeoutMs, s.maxResponseBytes], argv.join(' ')).to.deep.equal([ms, bytes]);
    }
  });

  it('reads --read-cache-window (a Go duration, 5s by default; 0 only shares reads in flight)', () => {
    const cases: [string[], number][] = [
      [[], 5000],
      [['--read-cache-window=0'], 0],
      [['--read-cache-window=0s'], 0],
      [['--read-cache-window=1m'], 60_000],
      [['--read-cache-window=250ms'], 250],
    ];
    for (const [argv, ms] of cases)
      expect(providerSettings({}, flagsOf(argv)).readCacheWindowMs, argv.join(' ')).to.equal(ms);
  });

  const errors: [string, Record<string, string>, string[], string][] = [
    [
      '--read-cache-window negative',
      {},
      ['--read-cache-window=-1s'],
      '--read-cache-window must be between 0 and 1h, got "-1s"',
    ],
    [
      '--read-cache-window over an hour',
      {},
      ['--read-cache-window=2h'],
      '--read-cache-window must be between 0 and 1h, got "2h"',
    ],
    [
      '--read-cache-window without a unit',
      {},
      ['--read-cache-window=5'],
      '--read-cache-window: missing unit in duration "5" (use Go duration syntax such as 5s, or 0)',
    ],
    [
      'VAULT_SKIP_VERIFY not a Go boolean',
      { VAULT_SKIP_VERIFY: 'yes' },
      [],
      'environment variable VAULT_SKIP_VERIFY must be true or false (Go strconv.ParseBool spellings)',
    ],
    [
      '--vault-request-timeout without a unit',
      {},
      ['--vault-request-timeout=10'],
      '--vault-request-timeout: missing unit in duration "10" (use Go duration syntax such as 10s or 1m30s)',
    ],
    [
      '--vault-request-timeout zero',
      {},
      ['--vault-request-timeout=0s'],
      '--vault-request-timeout must be between 1ms and 596h, got "0s"',
    ],
    [
      '--vault-request-timeout negative',
      {},
      ['--vault-request-timeout=-5s'],
      '--vault-request-timeout must be between 1ms and 596h, got "-5s"',
    ],
    [
      '--vault-request-timeout empty',
      {},
      ['--vault-request-timeout='],
      '--vault-request-timeout: empty duration (use Go duration syntax such as 10s or 1m30s)',
    ],
    [
      '--vault-max-response-bytes zero',
      {},
      ['--vault-max-response-bytes=0'],
      '--vault-max-response-bytes must be a whole number of bytes, at least 1, got "0"',
    ],
    [
      '--vault-max-response-bytes with a unit',
      {},
      ['--vault-max-response-bytes=4MiB'],
      '--vault-max-response-bytes must be a whole number of bytes, at least 1, got "4MiB"',
    ],
    [
      'VAULT_ADDR not a URL',
      { VAULT_ADDR: 'vault' },
      [],
      'VAULT_ADDR must be a URL such as https://vault.example.com:8200',
    ],
    [
      '--vault-addr not http(s)',
      { VAULT_ADDR: 'http://ok' },
      ['--vault-addr=ftp://x'],
      '--vault-addr must be an http:// or https:// URL',
    ],
    [
      'VAULT_CLIENT_CERT without key',
      { VAULT_CLIENT_CERT: '/c' },
      [],
      'VAULT_CLIENT_KEY is required with VAULT_CLIENT_CERT: a client certificate needs its key',
    ],
    [
      '--vault-tls-client-key without cert',
      {},
      ['--vault-tls-client-key=/k'],
      '--vault-tls-client-cert is required with --vault-tls-client-key: a client certificate needs its key',
    ],
    [
      '--vault-mount with ..',
      {},
      ['--vault-mount=..'],
      '--vault-mount must be a mount path such as "kubernetes" or "k8s/cluster-1"',
    ],
    [
      '--cache-size not a number',
      {},
      ['--cache-size=-1'],
      '--cache-size must be a whole number (0 keeps no identities), got "-1"',
    ],
    [
      'VAULT_NAMESPACE with a control character',
      { VAULT_NAMESPACE: 'a\r' },
      [],
      'VAULT_NAMESPACE must not hold control characters',
    ],
  ];
  for (const [name, env, argv, message] of errors) {
    it(`refuses to start with ${name}`, () => expect(startFailure(env, argv)).to.equal(message));
  }
});
