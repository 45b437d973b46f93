import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from 'node:https';
import type { TokenCredential } from '@azure/core-auth';
import { ClientSecretCredential } from '@azure/identity';
import { CertificateClient } from '@azure/keyvault-certificates';
import { KeyClient } from '@azure/keyvault-keys';
import { SecretClient } from '@azure/keyvault-secrets';
import {
  type CertificateMaterial,
  makeCertificateChain,
  pfxSecretValue,
} from '../support/azure-keyvault/certificates.js';
import { standInAgent } from '../support/azure-keyvault/sdk-harness.js';
import { type AzureStandIn, startAzureStandIn } from '../support/azure-keyvault/stand-in.js';

// Contract tests of the Azure Key Vault stand-in (test/support/azure-keyvault/) with the REAL
// SDK clients (SecretClient with serviceVersion 7.6, KeyClient, CertificateClient,
// ClientSecretCredential). The shared cases run against any `KeyVaultTarget`: the stand-in
// here, or a real vault when these are set (then the stand-in-only cases in
// azure-keyvault-standin-strict.test.ts do not apply):
//   SSC_AZURE_KEYVAULT_URL=https://<vault>.vault.azure.net AZURE_TENANT_ID=… AZURE_CLIENT_ID=…
//   AZURE_CLIENT_SECRET=… (the app needs secrets get/list/set, keys get/list/create,
//   certificates get/list/import on the vault)
// No real vault can be reached from these machines (docs/conformance.md), so that variant skips here.

/** What the shared contract cases need from a vault. */
interface KeyVaultTarget {
  readonly vaultUrl: string;
  readonly credential: TokenCredential;
  readonly agent: Agent | undefined;
  setSecret(name: string, value: string): Promise<string>;
  disableSecret(name: string, version: string): Promise<void>;
  importCertificate(
    name: string,
    material: CertificateMaterial,
    contentType: 'application/x-pkcs12' | 'application/x-pem-file',
  ): Promise<string>;
  createKey(name: string, kty: 'RSA' | 'EC'): Promise<string>;
}

function clients(t: Pick<KeyVaultTarget, 'vaultUrl' | 'credential' | 'agent'>) {
  const options = { serviceVersion: '7.6' as const, ...(t.agent ? { agent: t.agent } : {}) };
  return {
    secrets: new SecretClient(t.vaultUrl, t.credential, options),
    keys: new KeyClient(t.vaultUrl, t.credential, { ...options, serviceVersion: '7.6' }),
    certificates: new CertificateClient(t.vaultUrl, t.credential, { ...options, serviceVersion: '7.6' }),
  };
}

/** The PEM text of `openssl pkcs12` reading a password-less PFX (3DES/RC2 need -legacy). */
function pfxContents(base64: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'akv-pfx-'));
  try {
    writeFileSync(join(dir, 'x.pfx'), Buffer.from(base64, 'base64'));
    return execFileSync('openssl', ['pkcs12', '-in', join(dir, 'x.pfx'), '-nodes', '-passin', 'pass:', '-legacy'], {
      encoding: 'latin1',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const unique = (p: string) => `${p}-${Math.random().toString(36).slice(2, 8)}`;

function contractCases(target: () => KeyVaultTarget): void {
  it('gets the latest secret version and a pinned one; versions are 32 hex characters', async () => {
    const t = target();
    const name = unique('db-password');
    const v1 = await t.setSecret(name, 'first');
    const v2 = await t.setSecret(name, 'second');
    const { secrets } = clients(t);
    const latest = await secrets.getSecret(name);
    expect(latest.value).to.equal('second');
    expect(latest.properties.version)
      .to.equal(v2)
      .and.match(/^[0-9a-f]{32}$/);
    expect(latest.properties.createdOn).to.be.instanceOf(Date);
    expect((await secrets.getSecret(name, { version: v1 })).value).to.equal('first');
  });

  it('lists secret versions page by page (maxresults) with nextLink', async () => {
    const t = target();
    const name = unique('paged');
    const made = [await t.setSecret(name, 'a'), await t.setSecret(name, 'b'), await t.setSecret(name, 'c')];
    const pages: string[][] = [];
    for await (const page of clients(t).secrets.listPropertiesOfSecretVersions(name).byPage({ maxPageSize: 2 })) {
      pages.push(page.map((p) => p.version ?? ''));
    }
    expect(pages.map((p) => p.length)).to.deep.equal([2, 1]);
    expect(pages.flat().sort()).to.deep.equal([...made].sort());
  });

  it('answers 404 SecretNotFound for an unknown secret and an unknown version', async () => {
    const t = target();
    const { secrets } = clients(t);
    const err = await secrets.getSecret('no-such-secret').then(
      () => undefined,
      (e: unknown) => e as { statusCode?: number; code?: string; message: string },
    );
    expect(err?.statusCode).to.equal(404);
    expect(err?.code).to.equal('SecretNotFound');
    expect(err?.message).to.match(/^A secret with \(name\/id\) no-such-secret was not found in this key vault\./);
    const name = unique('versioned');
    await t.setSecret(name, 'x');
    const err2 = await secrets.getSecret(name, { version: '0'.repeat(32) }).then(
      () => undefined,
      (e: unknown) => e as { statusCode?: number; code?: string },
    );
    expect([err2?.statusCode, err2?.code]).to.deep.equal([404, 'SecretNotFound']);
  });

  it('refuses to read a disabled version: 403 Forbidden, inner error SecretDisabled', async () => {
    const t = target();
    const name = unique('disabled');
    const v = await t.setSecret(name, 'x');
    await t.disableSecret(name, v);
    const err = await clients(t)
      .secrets.getSecret(name)
      .then(
        () => undefined,
        (e: unknown) =>
          e as {
            statusCode?: number;
            code?: string;
            message: string;
            details?: { error?: { innerError?: { code?: string } } };
          },
      );
    expect([err?.statusCode, err?.code, err?.message]).to.deep.equal([
      403,
      'Forbidden',
      'Operation get is not allowed on a disabled secret.',
    ]);
    expect(err?.details?.error?.innerError?.code).to.equal('SecretDisabled');
    const listed = [];
    for await (const p of clients(t).secrets.listPropertiesOfSecretVersions(name)) listed.push(p);
    expect(listed.map((p) => p.enabled)).to.deep.equal([false]);
  });

  for (const kind of ['rsa', 'ec'] as const) {
    it(`serves an imported ${kind.toUpperCase()} certificate as certificate, key and PFX secret sharing one version`, async () => {
      const t = target();
      const name = unique(`cert-${kind}`);
      const material = await makeCertificateChain(kind);
      const version = await t.importCertificate(name, material, 'application/x-pkcs12');
      const { secrets, certificates, keys } = clients(t);
      const secret = await secrets.getSecret(name);
      expect(secret.properties.contentType).to.equal('application/x-pkcs12');
      expect(secret.properties.managed).to.equal(true);
      expect(secret.properties.version).to.equal(version);
      expect(secret.properties.certificateKeyId).to.equal(`${t.vaultUrl}/keys/${name}/${version}`);
      const pem = pfxContents(secret.value ?? '');
      expect(pem.match(/-----BEGIN CERTIFICATE-----/g)?.length).to.equal(3);
      expect(pem).to.include('-----BEGIN PRIVATE KEY-----');
      const cert = await certificates.getCertificate(name);
      expect(cert.properties.version).to.equal(version);
      expect(Buffer.from(cert.cer ?? new Uint8Array()).toString('base64')).to.equal(
        material.certPems[0]?.replace(/-----[^-]+-----|\s/g, ''),
      );
      expect(cert.keyId).to.equal(`${t.vaultUrl}/keys/${name}/${version}`);
      expect(cert.secretId).to.equal(`${t.vaultUrl}/secrets/${name}/${version}`);
      expect(cert.policy?.contentType).to.equal('application/x-pkcs12');
      expect(Buffer.from(cert.properties.x509Thumbprint ?? new Uint8Array()).length).to.equal(20);
      const key = await keys.getKey(name);
      expect(key.properties.version).to.equal(version);
      expect(key.key?.kty).to.equal(kind === 'rsa' ? 'RSA' : 'EC');
      const versions = [];
      for await (const p of certificates.listPropertiesOfCertificateVersions(name)) versions.push(p.version);
      expect(versions).to.deep.equal([version]);
    });
  }

  it('serves a PEM certificate backing secret with the private key first', async () => {
    const t = target();
    const name = unique('cert-pem');
    await t.importCertificate(name, await makeCertificateChain('ec'), 'application/x-pem-file');
    const secret = await clients(t).secrets.getSecret(name);
    expect(secret.properties.contentType).to.equal('application/x-pem-file');
    expect(secret.value).to.match(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----BEGIN CERTIFICATE-----/);
  });

  it('serves RSA and EC keys as public JWKs and lists key versions', async () => {
    const t = target();
    const rsa = unique('rsa-key');
    const ec = unique('ec-key');
    const rv = await t.createKey(rsa, 'RSA');
    await t.createKey(ec, 'EC');
    const { keys } = clients(t);
    const r = await keys.getKey(rsa);
    expect([r.key?.kty, r.properties.version, Buffer.from(r.key?.e ?? new Uint8Array()).toString('hex')]).to.deep.equal(
      ['RSA', rv, '010001'],
    );
    expect(r.key?.d).to.equal(undefined);
    const e = await keys.getKey(ec);
    expect([e.key?.kty, e.key?.crv, Buffer.from(e.key?.x ?? new Uint8Array()).length]).to.deep.equal([
      'EC',
      'P-256',
      32,
    ]);
    const versions = [];
    for await (const p of keys.listPropertiesOfKeyVersions(rsa)) versions.push(p.version);
    expect(versions).to.deep.equal([rv]);
    const err = await keys.getKey('no-such-key').then(
      () => undefined,
      (x: unknown) => x as { statusCode?: number; code?: string },
    );
    expect([err?.statusCode, err?.code]).to.deep.equal([404, 'KeyNotFound']);
  });
}

describe('Azure Key Vault stand-in: contract with the real SDK clients', function () {
  this.timeout(60_000);
  let standIn: AzureStandIn;
  let target: KeyVaultTarget;

  before(async () => {
    standIn = await startAzureStandIn();
    const vault = standIn.vault('contract-kv');
    const app = standIn.registerApp('11111111-2222-3333-4444-555555555555', 'app-secret-value');
    vault.grant(app, ['secrets', 'keys', 'certificates']);
    const agent = standInAgent(standIn.connectTo, standIn.caPem);
    target = {
      vaultUrl: 'https://contract-kv.vault.azure.net',
      credential: new ClientSecretCredential(standIn.tenantId, app.clientId, 'app-secret-value', { agent }),
      agent,
      setSecret: async (name, value) => vault.setSecret(name, value),
      disableSecret: async (name, version) => vault.setEnabled('secrets', name, false, version),
      importCertificate: (name, material, contentType) => vault.importCertificate(name, material, contentType),
      createKey: async (name, kty) => vault.createKey(name, kty),
    };
  });
  after(async () => {
    target?.agent?.destroy();
    await standIn?.close();
  });

  contractCases(() => target);
});

describe('Azure Key Vault contract against a real vault (SSC_AZURE_KEYVAULT_URL)', function () {
  this.timeout(300_000);
  let target: KeyVaultTarget;

  before(function () {
    const url = process.env['SSC_AZURE_KEYVAULT_URL'];
    const [tenant, client, secret] = [
      process.env['AZURE_TENANT_ID'],
      process.env['AZURE_CLIENT_ID'],
      process.env['AZURE_CLIENT_SECRET'],
    ];
    if (!url || !tenant || !client || !secret) {
      process.stderr.write(
        '    skipping the real-vault contract run: no real Azure Key Vault can be reached here (set SSC_AZURE_KEYVAULT_URL, AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET to run it)\n',
      );
      this.skip();
    }
    const credential = new ClientSecretCredential(tenant, client, secret);
    const t = clients({ vaultUrl: url, credential, agent: undefined });
    target = {
      vaultUrl: url.replace(/\/$/, ''),
      credential,
      agent: undefined,
      setSecret: async (name, value) => (await t.secrets.setSecret(name, value)).properties.version ?? '',
      disableSecret: async (name, version) =>
        void (await t.secrets.updateSecretProperties(name, version, { enabled: false })),
      importCertificate: async (name, material, contentType) => {
        const bytes =
          contentType === 'application/x-pem-file'
            ? Buffer.from(material.keyPem + material.certPems.join(''))
            : Buffer.from(await pfxSecretValue(material), 'base64');
        return (
          (await t.certificates.importCertificate(name, bytes, { policy: { contentType, issuerName: 'Unknown' } }))
            .properties.version ?? ''
        );
      },
      createKey: async (name, kty) => (await t.keys.createKey(name, kty)).properties.version ?? '',
    };
  });

  contractCases(() => target);
});
