import { expect } from 'chai';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ClientAssertionCredential, ClientSecretCredential, ManagedIdentityCredential } from '@azure/identity';
import { SecretClient } from '@azure/keyvault-secrets';
import { ConnectToAgent, parseConnectTo } from '../../providers/azure/connect-to.js';
import { signJwt } from '../support/azure-keyvault/jwt.js';
import { rawRequest, standInAgent } from '../support/azure-keyvault/sdk-harness.js';
import { type AzureStandIn, startAzureStandIn } from '../support/azure-keyvault/stand-in.js';
import { standInPki } from '../support/azure-keyvault/standin-pki.js';

// The Entra ID and IMDS side of the Azure stand-in (test/support/azure-keyvault/) with the
// real @azure/identity credentials: client secrets, workload identity client assertions
// verified like a federated identity credential, managed identity through
// AZURE_POD_IDENTITY_AUTHORITY_HOST, and the AADSTS errors Entra answers. Against real Entra
// the same credentials would need a real app, issuer and VM; none can be reached here.
// Also: ConnectToAgent keeps SNI and refuses a certificate not valid for the real name.

const ISSUER = 'https://oidc.cluster.test/issuer';
const SUBJECT = 'system:serviceaccount:apps:web';
const WI_CLIENT = 'c1c1c1c1-0000-4000-8000-000000000001';

function assertion(key: KeyObject, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: ISSUER, sub: SUBJECT, aud: ['api://AzureADTokenExchange'], iat: now, nbf: now, exp: now + 3600, ...claims },
    key,
    'sa-key',
  );
}

async function failure(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'no error',
    (e: unknown) => (e as Error).message,
  );
}

describe('Azure stand-in: Entra ID and IMDS with the real @azure/identity credentials', function () {
  this.timeout(60_000);
  let standIn: AzureStandIn;
  let agent: ConnectToAgent;
  const issuerKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const savedImds = process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];

  before(async () => {
    standIn = await startAzureStandIn();
    const vault = standIn.vault('identity-kv');
    vault.setSecret('app-config', 'config-value');
    vault.grant(standIn.federate(WI_CLIENT, ISSUER, [issuerKey], SUBJECT), ['secrets']);
    standIn.registerApp('d1d1d1d1-0000-4000-8000-000000000001', 'right-secret');
    agent = standInAgent(standIn.connectTo, standIn.caPem);
    process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = standIn.imdsUrl;
  });
  after(async () => {
    if (savedImds === undefined) delete process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];
    else process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = savedImds;
    agent?.destroy();
    await standIn?.close();
  });

  it('refuses a wrong client secret (AADSTS7000215), an unknown app (AADSTS700016) and an unknown tenant (AADSTS90002)', async () => {
    const scope = 'https://vault.azure.net/.default';
    expect(
      await failure(
        new ClientSecretCredential(standIn.tenantId, 'd1d1d1d1-0000-4000-8000-000000000001', 'wrong', {
          agent,
        }).getToken(scope),
      ),
    ).to.include('AADSTS7000215: Invalid client secret provided.');
    expect(
      await failure(
        new ClientSecretCredential(standIn.tenantId, 'e1e1e1e1-0000-4000-8000-000000000001', 'x', { agent }).getToken(
          scope,
        ),
      ),
    ).to.include(
      `AADSTS700016: Application with identifier 'e1e1e1e1-0000-4000-8000-000000000001' was not found in the directory '${standIn.tenantId}'`,
    );
    expect(
      await failure(
        new ClientSecretCredential(
          'f1f1f1f1-0000-4000-8000-000000000001',
          'd1d1d1d1-0000-4000-8000-000000000001',
          'right-secret',
          { agent },
        ).getToken(scope),
      ),
    ).to.include("AADSTS90002: Tenant 'f1f1f1f1-0000-4000-8000-000000000001' not found.");
  });

  it('exchanges a workload identity assertion for a Key Vault token and reads a secret with it', async () => {
    const cred = new ClientAssertionCredential(standIn.tenantId, WI_CLIENT, async () => assertion(issuerKey), {
      agent,
    });
    const client = new SecretClient('https://identity-kv.vault.azure.net', cred, { serviceVersion: '7.6', agent });
    expect((await client.getSecret('app-config')).value).to.equal('config-value');
  });

  it('refuses assertions that do not match a federated identity credential', async () => {
    const scope = 'https://vault.azure.net/.default';
    const get = (a: string) =>
      failure(new ClientAssertionCredential(standIn.tenantId, WI_CLIENT, async () => a, { agent }).getToken(scope));
    expect(await get(assertion(issuerKey, { sub: 'system:serviceaccount:apps:other' }))).to.include(
      "AADSTS70021: No matching federated identity record found for presented assertion. Assertion Issuer: 'https://oidc.cluster.test/issuer'. Assertion Subject: 'system:serviceaccount:apps:other'.",
    );
    expect(await get(assertion(issuerKey, { aud: 'api://SomethingElse' }))).to.include('AADSTS70021');
    expect(await get(assertion(issuerKey, { iss: 'https://evil.test' }))).to.include(
      "AADSTS700211: No matching federated identity record found for presented assertion issuer 'https://evil.test'",
    );
    expect(await get(assertion(otherKey))).to.include('AADSTS700027');
    const past = Math.floor(Date.now() / 1000) - 7200;
    expect(await get(assertion(issuerKey, { iat: past, nbf: past, exp: past + 600 }))).to.include(
      'AADSTS700024: Client assertion is not within its valid time range.',
    );
  });

  it('gives managed identity tokens through IMDS (system- and user-assigned) and refuses unknown identities', async () => {
    const vault = standIn.vault('identity-kv');
    vault.grant(standIn.managedIdentity(), ['secrets']);
    vault.grant(standIn.managedIdentity('a2a2a2a2-0000-4000-8000-000000000001'), ['secrets']);
    standIn.clearRequests();
    const system = new SecretClient('https://identity-kv.vault.azure.net', new ManagedIdentityCredential(), {
      serviceVersion: '7.6',
      agent,
    });
    expect((await system.getSecret('app-config')).value).to.equal('config-value');
    const user = new SecretClient(
      'https://identity-kv.vault.azure.net',
      new ManagedIdentityCredential({ clientId: 'a2a2a2a2-0000-4000-8000-000000000001' }),
      { serviceVersion: '7.6', agent },
    );
    expect((await user.getSecret('app-config')).value).to.equal('config-value');
    const imds = standIn.requests().filter((r) => r.service === 'imds');
    expect(
      imds.map((r) => [r.status, r.query['api-version'], r.query['resource'], r.query['client_id']]),
    ).to.deep.equal([
      [200, '2018-02-01', 'https://vault.azure.net', undefined],
      [200, '2018-02-01', 'https://vault.azure.net', 'a2a2a2a2-0000-4000-8000-000000000001'],
    ]);
    standIn.clearRequests();
    expect(
      await failure(
        new ManagedIdentityCredential({ clientId: 'b3b3b3b3-0000-4000-8000-000000000001' }).getToken(
          'https://vault.azure.net/.default',
        ),
      ),
    ).to.include('Identity not found');
    expect(standIn.requests().map((r) => [r.service, r.status, r.query['client_id']])).to.deep.equal([
      ['imds', 400, 'b3b3b3b3-0000-4000-8000-000000000001'],
    ]);
  });

  it('answers an IMDS request without the Metadata header with 400 invalid_request', async () => {
    const res = await fetch(
      `${standIn.imdsUrl}/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://vault.azure.net`,
    );
    expect([res.status, await res.json()]).to.deep.equal([
      400,
      { error: 'invalid_request', error_description: 'Required metadata header not specified' },
    ]);
  });
});

describe('ConnectToAgent against the stand-in certificate', function () {
  this.timeout(30_000);
  let server: Server;
  let port = 0;
  const seen: string[] = [];

  before(async () => {
    const pki = await standInPki();
    server = createServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (req, res) => {
      seen.push(String((req.socket as { servername?: string }).servername));
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );

  it('keeps the real host name as SNI and verifies the certificate for it', async () => {
    const pki = await standInPki();
    const agent = new ConnectToAgent(parseConnectTo(`sni-check.vault.azure.net:443=127.0.0.1:${port}`), {
      ca: pki.caCertPem,
    });
    try {
      expect((await rawRequest(agent, 'https://sni-check.vault.azure.net/')).status).to.equal(200);
      expect(seen).to.deep.equal(['sni-check.vault.azure.net']);
    } finally {
      agent.destroy();
    }
  });

  it('refuses a certificate not valid for the real host name, and one from an untrusted CA', async () => {
    const pki = await standInPki();
    const wrongName = new ConnectToAgent(parseConnectTo(`example.org:443=127.0.0.1:${port}`), { ca: pki.caCertPem });
    const noCa = new ConnectToAgent(parseConnectTo(`sni-check.vault.azure.net:443=127.0.0.1:${port}`));
    try {
      const e1 = await rawRequest(wrongName, 'https://example.org/').then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(e1?.code).to.equal('ERR_TLS_CERT_ALTNAME_INVALID');
      const e2 = await rawRequest(noCa, 'https://sni-check.vault.azure.net/').then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      expect(e2?.code).to.be.oneOf([
        'SELF_SIGNED_CERT_IN_CHAIN',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      ]);
    } finally {
      wrongName.destroy();
      noCa.destroy();
    }
  });
});
