import { expect } from 'chai';
import { ClientSecretCredential } from '@azure/identity';
import { KeyClient } from '@azure/keyvault-keys';
import { SecretClient } from '@azure/keyvault-secrets';
import { ManualClock } from '../support/azure-keyvault/clock.js';
import { rawRequest, standInAgent } from '../support/azure-keyvault/sdk-harness.js';
import { type AzureStandIn, startAzureStandIn } from '../support/azure-keyvault/stand-in.js';
import type { ConnectToAgent } from '../../providers/azure/connect-to.js';

// The Key Vault stand-in rejects what the real service rejects (test/support/azure-keyvault/),
// seen through the real SDK clients where they surface it and raw HTTPS where they would hide
// it. These cases drive the stand-in itself (injected throttling, its request log, its clock,
// a second tenant), so they have no real-vault variant; the shared contract cases are in
// azure-keyvault-standin.test.ts.

const APP = { clientId: '0a0a0a0a-1111-2222-3333-444444444444', secret: 'strict-app-secret' };
const OTHER = { clientId: '0b0b0b0b-1111-2222-3333-444444444444', secret: 'other-app-secret' };
const VAULT_URL = 'https://strict-kv.vault.azure.net';

describe('Azure Key Vault stand-in: strict like the real service', function () {
  this.timeout(60_000);
  let standIn: AzureStandIn;
  let agent: ConnectToAgent;
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 0, 0));
  let secrets: SecretClient;

  before(async () => {
    standIn = await startAzureStandIn({ clock });
    const vault = standIn.vault('strict-kv');
    vault.grant(standIn.registerApp(APP.clientId, APP.secret), ['secrets']);
    standIn.registerApp(OTHER.clientId, OTHER.secret);
    vault.setSecret('db-password', 'hunter2-value');
    agent = standInAgent(standIn.connectTo, standIn.caPem);
    secrets = new SecretClient(
      VAULT_URL,
      new ClientSecretCredential(standIn.tenantId, APP.clientId, APP.secret, { agent }),
      { serviceVersion: '7.6', agent },
    );
  });
  after(async () => {
    agent?.destroy();
    await standIn?.close();
  });

  it('follows the challenge: one unauthenticated 401, a token request, then authorised reads', async () => {
    standIn.clearRequests();
    await secrets.getSecret('db-password');
    await secrets.getSecret('db-password');
    const log = standIn.requests().map((r) => `${r.service} ${r.operation} ${r.status} ${r.authorized}`);
    expect(log.filter((l) => l.startsWith('keyvault'))).to.deep.equal([
      'keyvault getSecret 401 false',
      'keyvault getSecret 200 true',
      'keyvault getSecret 200 true',
    ]);
    expect(log.filter((l) => l.startsWith('entra token'))).to.deep.equal(['entra token 200 true']);
    expect(JSON.stringify(standIn.requests())).not.to.include('hunter2-value');
  });

  it('answers a request without a bearer token with 401, AKV10000 and the tenant challenge', async () => {
    const r = await rawRequest(agent, `${VAULT_URL}/secrets/db-password?api-version=7.6`);
    expect(r.status).to.equal(401);
    expect(r.headers['www-authenticate']).to.equal(
      `Bearer authorization="https://login.microsoftonline.com/${standIn.tenantId}", resource="https://vault.azure.net"`,
    );
    expect(r.body).to.deep.equal({
      error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' },
    });
  });

  it('answers a missing or unknown api-version with 400 BadParameter', async () => {
    const missing = await rawRequest(agent, `${VAULT_URL}/secrets/db-password`);
    expect([missing.status, (missing.body as { error: { code: string } }).error.code]).to.deep.equal([
      400,
      'BadParameter',
    ]);
    const unknown = await rawRequest(agent, `${VAULT_URL}/secrets/db-password?api-version=9.9`);
    expect(unknown.body).to.deep.equal({
      error: {
        code: 'BadParameter',
        message: 'The specified version (9.9) is not recognized. Consider using the latest supported version (7.6).',
      },
    });
  });

  it('refuses a token for another audience (AKV10022) and one from another tenant (AKV10032)', async () => {
    const cred = new ClientSecretCredential(standIn.tenantId, APP.clientId, APP.secret, { agent });
    const mgmt = await cred.getToken('https://management.azure.com/.default');
    const wrongAud = await rawRequest(agent, `${VAULT_URL}/secrets/db-password?api-version=7.6`, {
      headers: { authorization: `Bearer ${mgmt.token}` },
    });
    expect(wrongAud.status).to.equal(401);
    expect((wrongAud.body as { error: { message: string } }).error.message).to.equal(
      'AKV10022: Invalid audience. Expected https://vault.azure.net, found: https://management.azure.com.',
    );
    const otherTenant = standIn.addTenant();
    standIn.registerApp(APP.clientId, APP.secret, otherTenant);
    const foreign = await new ClientSecretCredential(otherTenant, APP.clientId, APP.secret, { agent }).getToken(
      'https://vault.azure.net/.default',
    );
    const r = await rawRequest(agent, `${VAULT_URL}/secrets/db-password?api-version=7.6`, {
      headers: { authorization: `Bearer ${foreign.token}` },
    });
    expect(r.status).to.equal(401);
    expect((r.body as { error: { message: string } }).error.message).to.match(
      /^AKV10032: Invalid issuer\. Expected one of https:\/\/sts\.windows\.net\/[0-9a-f-]+\/, found https:\/\/sts\.windows\.net\/[0-9a-f-]+\/\.$/,
    );
    expect(r.headers['www-authenticate']).to.include(standIn.tenantId);
  });

  it('refuses a token signed by another stand-in instance (AKV10046)', async () => {
    const other = await startAzureStandIn();
    try {
      other.registerApp(APP.clientId, APP.secret);
      const otherAgent = standInAgent(other.connectTo, other.caPem);
      const token = await new ClientSecretCredential(other.tenantId, APP.clientId, APP.secret, {
        agent: otherAgent,
      }).getToken('https://vault.azure.net/.default');
      otherAgent.destroy();
      const r = await rawRequest(agent, `${VAULT_URL}/secrets/db-password?api-version=7.6`, {
        headers: { authorization: `Bearer ${token.token}` },
      });
      expect([r.status, (r.body as { error: { message: string } }).error.message]).to.deep.equal([
        401,
        'AKV10046: Unable to resolve the key used for signature validation.',
      ]);
    } finally {
      await other.close();
    }
  });

  it('answers 403 Forbidden naming the principal when the access policy lacks the object kind', async () => {
    const noAccess = new SecretClient(
      VAULT_URL,
      new ClientSecretCredential(standIn.tenantId, OTHER.clientId, OTHER.secret, { agent }),
      { serviceVersion: '7.6', agent },
    );
    const err = await noAccess.getSecret('db-password').then(
      () => undefined,
      (e: unknown) => e as { statusCode?: number; code?: string; message: string },
    );
    expect([err?.statusCode, err?.code]).to.deep.equal([403, 'Forbidden']);
    expect(err?.message).to.match(
      new RegExp(
        `^The user, group or application 'appid=${OTHER.clientId};oid=[0-9a-f-]+;iss=https://sts.windows.net/${standIn.tenantId}/' does not have secrets get permission on key vault 'strict-kv;location=eastus'\\.`,
      ),
    );
    const keys = new KeyClient(
      VAULT_URL,
      new ClientSecretCredential(standIn.tenantId, APP.clientId, APP.secret, { agent }),
      { serviceVersion: '7.6', agent },
    );
    const keyErr = await keys.getKey('any-key').then(
      () => undefined,
      (e: unknown) => e as { statusCode?: number; message: string },
    );
    expect(keyErr?.statusCode).to.equal(403);
    expect(keyErr?.message).to.include('does not have keys get permission');
  });

  it('throttles with 429 and Retry-After, which the SDK waits out before retrying', async () => {
    standIn.clearRequests();
    standIn.throttle(1, 1);
    expect((await secrets.getSecret('db-password')).value).to.equal('hunter2-value');
    const kv = standIn.requests().filter((r) => r.service === 'keyvault');
    expect(kv.map((r) => r.status)).to.deep.equal([429, 200]);
    expect((kv[1]?.at ?? 0) - (kv[0]?.at ?? 0)).to.be.at.least(950);
  });

  it('logs operations so tests can count value reads against version listings', async () => {
    standIn.clearRequests();
    for await (const _ of secrets.listPropertiesOfSecretVersions('db-password')) void _;
    await secrets.getSecret('db-password');
    const ops = standIn
      .requests()
      .filter((r) => r.service === 'keyvault' && r.status === 200)
      .map((r) => r.operation);
    expect(ops).to.deep.equal(['getSecretVersions', 'getSecret']);
    expect(standIn.requests().every((r) => r.service !== 'keyvault' || r.principal === APP.clientId)).to.equal(true);
  });

  it('stamps created/updated from the injected clock', async () => {
    const vault = standIn.vault('strict-kv');
    vault.setSecret('clocked', 'a');
    clock.advance(90);
    vault.setSecret('clocked', 'b');
    const props = [];
    for await (const p of secrets.listPropertiesOfSecretVersions('clocked')) props.push(p.createdOn?.getTime());
    expect(props.sort()).to.deep.equal([Date.UTC(2026, 2, 1, 12, 0, 0), Date.UTC(2026, 2, 1, 12, 1, 30)]);
  });

  it('serves the US Government cloud under its own names (challenge resource and login host)', async () => {
    const gov = standIn.vault('gov-kv', { cloud: 'AzureUSGovernmentCloud' });
    gov.grant(standIn.registerApp(APP.clientId, APP.secret), ['secrets']);
    gov.setSecret('gov-secret', 'gov-value');
    const govAgent = standInAgent(standIn.connectTo, standIn.caPem);
    try {
      const cred = new ClientSecretCredential(standIn.tenantId, APP.clientId, APP.secret, {
        agent: govAgent,
        authorityHost: 'https://login.microsoftonline.us',
      });
      const client = new SecretClient('https://gov-kv.vault.usgovcloudapi.net', cred, {
        serviceVersion: '7.6',
        agent: govAgent,
      });
      expect((await client.getSecret('gov-secret')).value).to.equal('gov-value');
      const r = await rawRequest(govAgent, 'https://gov-kv.vault.usgovcloudapi.net/secrets/gov-secret?api-version=7.6');
      expect(r.headers['www-authenticate']).to.equal(
        `Bearer authorization="https://login.microsoftonline.us/${standIn.tenantId}", resource="https://vault.usgovcloudapi.net"`,
      );
    } finally {
      govAgent.destroy();
    }
  });
});
