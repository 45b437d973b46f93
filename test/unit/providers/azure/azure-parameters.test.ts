import { expect } from 'chai';
import { SscError } from '../../../../lib/errors.js';
import { parseStackEnvironment, resolveCloud, type AzureCloud } from '../../../../providers/azure/cloud.js';
import { goEqualFold, goTrimSpace } from '../../../../providers/azure/go-strings.js';
import { parseAzureMount, type AzureMountDefaults } from '../../../../providers/azure/parameters.js';

// Parameters as Azure's provider v1.8.2 reads them (pkg/provider/types/parameters.go,
// provider.go, auth/auth.go) and the conflicts we refuse where upstream picks silently.

const CLIENT_SECRET = 'sp-s3cret-value-never-shown';
const jwtFor = (sub: string) =>
  `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub, aud: ['api://AzureADTokenExchange'] })).toString('base64url')}.c2lnbmF0dXJl`;
const WI_TOKEN = jwtFor('system:serviceaccount:shop:web');
const TOKENS = JSON.stringify({
  'api://AzureADTokenExchange': { token: WI_TOKEN, expirationTimestamp: '2030-01-01T00:00:00Z' },
});
const OBJECTS = 'array:\n  - |\n    objectName: db-pass\n    objectType: secret\n';
const DEFAULTS: AzureMountDefaults = { cloudName: 'AzurePublicCloud' };

function attrs(extra: Record<string, string | undefined>): Record<string, string> {
  const base: Record<string, string | undefined> = {
    'csi.storage.k8s.io/pod.name': 'web-0',
    'csi.storage.k8s.io/pod.namespace': 'shop',
    'csi.storage.k8s.io/serviceAccount.name': 'web',
    keyvaultName: 'kv-shop',
    tenantId: 'tenant-1',
    objects: OBJECTS,
    ...extra,
  };
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined));
}
const SP = { clientid: 'app-1', clientsecret: CLIENT_SECRET };

function failure(a: Record<string, string>, secrets: Record<string, string> = SP, defaults = DEFAULTS): SscError {
  try {
    parseAzureMount(a, secrets, defaults);
  } catch (err) {
    expect(err).to.be.instanceOf(SscError);
    const e = err as SscError;
    // No secret, token or its signature in any message.
    for (const secret of [CLIENT_SECRET, WI_TOKEN, 'c2lnbmF0dXJl']) expect(e.message).to.not.include(secret);
    expect(e.message).to.match(/^azure provider: /);
    return e;
  }
  throw new Error('expected the Mount to be refused');
}

describe('azure parameters', () => {
  it('reads a service-principal class: vault URL, tenant, public cloud, pod', () => {
    const m = parseAzureMount(attrs({}), SP, DEFAULTS);
    expect(m.vaultUrl).to.equal('https://kv-shop.vault.azure.net/');
    expect(m.tenantId).to.equal('tenant-1');
    expect(m.cloud.keyVaultResource).to.equal('https://vault.azure.net');
    expect(m.auth).to.deep.equal({ kind: 'service-principal', clientId: 'app-1', clientSecret: CLIENT_SECRET });
    expect(m.pod).to.deep.equal({ name: 'web-0', namespace: 'shop', serviceAccountName: 'web' });
    expect(m.objects.map((o) => o.objectName)).to.deep.equal(['db-pass']);
  });

  it('tenantID wins over tenantId; values are trimmed as Go strings.TrimSpace (U+0085 too)', () => {
    expect(
      parseAzureMount(attrs({ tenantID: ' tenant-2\u0085', tenantId: 'tenant-1' }), SP, DEFAULTS).tenantId,
    ).to.equal('tenant-2');
    expect(parseAzureMount(attrs({ keyvaultName: '\tkv-shop \n' }), SP, DEFAULTS).keyvaultName).to.equal('kv-shop');
    expect(goTrimSpace('\u00a0x\u3000')).to.equal('x');
    expect(goTrimSpace('\ufeffx')).to.equal('\ufeffx'); // not a space to Go
  });

  it('nodePublishSecretRef keys are matched in any case (upstream strings.ToLower)', () => {
    expect(parseAzureMount(attrs({}), { ClientID: 'app-2', CLIENTSECRET: CLIENT_SECRET }, DEFAULTS).auth).to.deep.equal(
      { kind: 'service-principal', clientId: 'app-2', clientSecret: CLIENT_SECRET },
    );
  });

  it("workload identity: clientID and the pod token for api://AzureADTokenExchange of the pod's service account", () => {
    const m = parseAzureMount(
      attrs({ clientID: 'wi-app', 'csi.storage.k8s.io/serviceAccount.tokens': TOKENS }),
      {},
      DEFAULTS,
    );
    expect(m.auth).to.deep.equal({ kind: 'workload-identity', clientId: 'wi-app', token: WI_TOKEN });
  });

  it('managed identity: system-assigned, or user-assigned by userAssignedIdentityID', () => {
    expect(parseAzureMount(attrs({ useVMManagedIdentity: 'true' }), {}, DEFAULTS).auth).to.deep.equal({
      kind: 'managed-identity',
      userAssignedIdentityId: undefined,
    });
    expect(
      parseAzureMount(attrs({ useVMManagedIdentity: 'T', userAssignedIdentityID: 'uami-1' }), {}, DEFAULTS).auth,
    ).to.deep.equal({ kind: 'managed-identity', userAssignedIdentityId: 'uami-1' });
    expect(
      parseAzureMount(attrs({ useVMManagedIdentity: 'FALSE', usePodIdentity: '0' }), SP, DEFAULTS).auth.kind,
    ).to.equal('service-principal');
  });

  const cases: [string, Record<string, string | undefined>, Record<string, string>, string, RegExp][] = [
    [
      'missing pod name',
      { 'csi.storage.k8s.io/pod.name': undefined },
      SP,
      'PodInfoMissing',
      /csi\.storage\.k8s\.io\/pod\.name/,
    ],
    [
      'missing pod namespace',
      { 'csi.storage.k8s.io/pod.namespace': ' ' },
      SP,
      'PodInfoMissing',
      /csi\.storage\.k8s\.io\/pod\.namespace/,
    ],
    [
      'usePodIdentity',
      { usePodIdentity: 'true' },
      SP,
      'InvalidParameters',
      /usePodIdentity is not supported.*clientID.*useVMManagedIdentity/,
    ],
    ['useAzureTokenProxy', { useAzureTokenProxy: '1' }, SP, 'InvalidParameters', /useAzureTokenProxy is not supported/],
    [
      'a boolean Go cannot parse',
      { useVMManagedIdentity: 'yes' },
      SP,
      'InvalidParameters',
      /useVMManagedIdentity must be "true" or "false", not "yes"/,
    ],
    ['no keyvaultName', { keyvaultName: undefined }, SP, 'InvalidParameters', /keyvaultName is required/],
    ['a short keyvaultName', { keyvaultName: 'kv' }, SP, 'InvalidParameters', /keyvaultName "kv" must be 3-24/],
    [
      'a keyvaultName with a dot',
      { keyvaultName: 'kv.evil.com' },
      SP,
      'InvalidParameters',
      /keyvaultName "kv\.evil\.com" must be 3-24 characters of letters, digits and dashes/,
    ],
    [
      'no tenant',
      { tenantId: undefined },
      SP,
      'InvalidParameters',
      /tenantID is required \(tenantId is its older name\)/,
    ],
    ['a tenant with a slash', { tenantID: 'a/b' }, SP, 'InvalidParameters', /tenantID "a\/b" must be a tenant id/],
    [
      'an unknown cloud',
      { cloudName: 'AzureMoonCloud' },
      SP,
      'InvalidParameters',
      /cloudName "AzureMoonCloud" is not a cloud: use AzurePublicCloud/,
    ],
    [
      'AzureStackCloud without a file',
      { cloudName: 'azurestackcloud' },
      SP,
      'InvalidParameters',
      /AzureStackCloud needs cloudEnvFileName/,
    ],
    [
      'useVMManagedIdentity + clientID',
      { useVMManagedIdentity: 'true', clientID: 'wi' },
      {},
      'InvalidParameters',
      /useVMManagedIdentity and clientID are both set/,
    ],
    [
      'useVMManagedIdentity + a client secret',
      { useVMManagedIdentity: 'true' },
      SP,
      'InvalidParameters',
      /useVMManagedIdentity is set and the nodePublishSecretRef Secret has "clientid" and "clientsecret"/,
    ],
    [
      'clientID + a client secret',
      { clientID: 'wi', 'csi.storage.k8s.io/serviceAccount.tokens': TOKENS },
      SP,
      'InvalidParameters',
      /clientID is set and the nodePublishSecretRef Secret has "clientid" and "clientsecret"/,
    ],
    [
      'userAssignedIdentityID without useVMManagedIdentity',
      { userAssignedIdentityID: 'uami' },
      SP,
      'InvalidParameters',
      /userAssignedIdentityID is set without useVMManagedIdentity/,
    ],
    [
      'no identity at all',
      {},
      {},
      'InvalidParameters',
      /no identity: set clientID \(workload identity\), useVMManagedIdentity: "true" \(managed identity\), or a nodePublishSecretRef Secret with clientid and clientsecret/,
    ],
    ['no clientsecret', {}, { clientid: 'app' }, 'InvalidParameters', /has no clientsecret/],
    ['an empty clientid', {}, { clientid: '', clientsecret: CLIENT_SECRET }, 'InvalidParameters', /has no clientid/],
    [
      'two clientid keys',
      {},
      { clientid: 'a', ClientId: 'b', clientsecret: CLIENT_SECRET },
      'InvalidParameters',
      /"clientid" and "ClientId": keep one clientid key/,
    ],
    [
      'workload identity without the token',
      { clientID: 'wi' },
      {},
      'ServiceAccountTokenMissing',
      /no service-account token for audience "api:\/\/AzureADTokenExchange".*tokenRequests \(workload identity \(clientID\)/,
    ],
    [
      "workload identity with another account's token",
      {
        clientID: 'wi',
        'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({
          'api://AzureADTokenExchange': { token: jwtFor('system:serviceaccount:shop:admin') },
        }),
      },
      {},
      'ServiceAccountTokenMismatch',
      /has sub "system:serviceaccount:shop:admin", not "system:serviceaccount:shop:web"/,
    ],
    [
      'workload identity without the service account name',
      {
        clientID: 'wi',
        'csi.storage.k8s.io/serviceAccount.name': undefined,
        'csi.storage.k8s.io/serviceAccount.tokens': TOKENS,
      },
      {},
      'PodInfoMissing',
      /serviceAccount\.name/,
    ],
  ];
  for (const [name, extra, secrets, reason, message] of cases) {
    it(`refuses ${name} (${reason}), naming the fields and never a secret`, () => {
      const e = failure(attrs(extra), secrets);
      expect(e.reason).to.equal(reason);
      expect(e.kind).to.equal(reason === 'InvalidParameters' ? 'invalid-argument' : 'failed-precondition');
      expect(e.message).to.match(message);
    });
  }
});

describe('azure clouds (go-autorest EnvironmentFromName)', () => {
  const none = {
    path: undefined,
    read: () => {
      throw new Error('unused');
    },
  };
  const table: [string, string, string, string][] = [
    ['AzurePublicCloud', 'vault.azure.net', 'https://login.microsoftonline.com/', 'https://vault.azure.net'],
    ['azurecloud', 'vault.azure.net', 'https://login.microsoftonline.com/', 'https://vault.azure.net'],
    [
      'AzureUSGovernmentCloud',
      'vault.usgovcloudapi.net',
      'https://login.microsoftonline.us/',
      'https://vault.usgovcloudapi.net',
    ],
    [
      'AZUREUSGOVERNMENT',
      'vault.usgovcloudapi.net',
      'https://login.microsoftonline.us/',
      'https://vault.usgovcloudapi.net',
    ],
    ['AzureChinaCloud', 'vault.azure.cn', 'https://login.chinacloudapi.cn/', 'https://vault.azure.cn'],
    // Go's strings.ToUpper maps the dotless ı to I: upstream accepts this spelling.
    ['azurech\u0131nacloud', 'vault.azure.cn', 'https://login.chinacloudapi.cn/', 'https://vault.azure.cn'],
    [
      'AzureGermanCloud',
      'vault.microsoftazure.de',
      'https://login.microsoftonline.de/',
      'https://vault.microsoftazure.de',
    ],
  ];
  for (const [name, suffix, authority, resource] of table) {
    it(`${name} → ${suffix}`, () => {
      const c: AzureCloud = resolveCloud(name, 'cloudName', none);
      expect([c.keyVaultDnsSuffix, c.authorityHost, c.keyVaultResource]).to.deep.equal([suffix, authority, resource]);
    });
  }

  it('cloudName wins over --cloud-name, which applies when the class sets none', () => {
    expect(parseAzureMount(attrs({}), SP, { cloudName: 'AzureChinaCloud' }).vaultUrl).to.equal(
      'https://kv-shop.vault.azure.cn/',
    );
    expect(
      parseAzureMount(attrs({ cloudName: 'AzureUSGovernmentCloud' }), SP, { cloudName: 'AzureChinaCloud' }).vaultUrl,
    ).to.equal('https://kv-shop.vault.usgovcloudapi.net/');
    expect(failure(attrs({}), SP, { cloudName: 'Nope' }).message).to.match(/--cloud-name "Nope" is not a cloud/);
  });

  it('AzureStackCloud (EqualFold, ſ and the Kelvin sign too) reads the environment file cloudEnvFileName names', () => {
    const files: Record<string, string> = {
      '/etc/kubernetes/custom_environment.json': JSON.stringify({
        name: 'AzureStackCloud',
        activeDirectoryEndpoint: 'https://login.stack.example',
        keyVaultDNSSuffix: 'vault.local.stack.example',
        keyVaultEndpoint: 'https://vault.local.stack.example/',
      }),
      '/env/ids.json': JSON.stringify({
        activeDirectoryEndpoint: 'https://adfs.stack.example/adfs/',
        keyVaultDNSSuffix: 'vault.s2',
        resourceIdentifiers: { keyVault: 'https://vault.s2' },
      }),
    };
    const read = (p: string) => {
      const t = files[p];
      if (t === undefined) throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
      return t;
    };
    const m = parseAzureMount(
      attrs({ cloudName: 'AzureStackCloud', cloudEnvFileName: '/etc/kubernetes/custom_environment.json' }),
      SP,
      { ...DEFAULTS, readEnvironmentFile: read },
    );
    expect(m.vaultUrl).to.equal('https://kv-shop.vault.local.stack.example/');
    expect(m.cloud).to.deep.equal({
      name: 'AzureStackCloud',
      keyVaultDnsSuffix: 'vault.local.stack.example',
      authorityHost: 'https://login.stack.example/',
      keyVaultResource: 'https://vault.local.stack.example',
    });
    // The provider's own AZURE_ENVIRONMENT_FILEPATH when the class names no file.
    expect(
      parseAzureMount(attrs({ cloudName: 'AZURE\u017fTAC\u212aCLOUD' }), SP, {
        ...DEFAULTS,
        environmentFilePath: '/env/ids.json',
        readEnvironmentFile: read,
      }).cloud.keyVaultResource,
    ).to.equal('https://vault.s2');
    expect(
      failure(attrs({ cloudName: 'AzureStackCloud', cloudEnvFileName: '/missing.json' }), SP, {
        ...DEFAULTS,
        readEnvironmentFile: read,
      }).message,
    ).to.equal('azure provider: cloudEnvFileName "/missing.json" cannot be read (ENOENT)');
    expect(goEqualFold('AzureStackCloud', 'AZURESTACKCLOUD')).to.equal(true);
  });

  it('a bad environment file is named with the field, never its text', () => {
    const bad: [string, RegExp][] = [
      ['{"secret": ', /is not valid JSON/],
      ['[]', /is not a JSON object/],
      ['{"activeDirectoryEndpoint":"https://a/","keyVaultEndpoint":"https://v"}', /has no keyVaultDNSSuffix/],
      ['{"keyVaultDNSSuffix":"v.x","keyVaultEndpoint":"https://v"}', /has no activeDirectoryEndpoint/],
      [
        '{"keyVaultDNSSuffix":"v.x","activeDirectoryEndpoint":"http://a/","keyVaultEndpoint":"https://v"}',
        /activeDirectoryEndpoint "http:\/\/a\/" must be an https:\/\/ URL/,
      ],
      [
        '{"keyVaultDNSSuffix":"v.x","activeDirectoryEndpoint":"https://a/"}',
        /has neither keyVaultEndpoint nor resourceIdentifiers\.keyVault/,
      ],
      [
        '{"keyVaultDNSSuffix":"v/x","activeDirectoryEndpoint":"https://a/","keyVaultEndpoint":"https://v"}',
        /keyVaultDNSSuffix "v\/x" is not a DNS suffix/,
      ],
    ];
    for (const [text, message] of bad) {
      try {
        parseStackEnvironment(text, 'cloudEnvFileName "/f.json"');
        expect.fail(text);
      } catch (err) {
        expect((err as SscError).reason).to.equal('InvalidParameters');
        expect((err as SscError).message)
          .to.match(message)
          .and.not.include('"secret"');
      }
    }
  });
});
