import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { MountResponse__Output } from '../../proto/gen/v1alpha1/MountResponse.js';
import { makeCertificateChain, type CertificateMaterial } from '../support/azure-keyvault/certificates.js';
import { ManualClock } from '../support/azure-keyvault/clock.js';
import { startAzureStandIn, type AzureStandIn } from '../support/azure-keyvault/stand-in.js';
import type { VaultStore } from '../support/azure-keyvault/vault-store.js';
import {
  objectsParameter,
  startAzureProvider,
  workloadIdentity,
  type WorkloadIdentity,
} from '../support/azure-provider.js';
import { podAttributes, type ProviderProcess } from '../support/provider-process.js';

// The azure provider process with the real Azure SDK against the Key Vault + Entra + IMDS
// stand-in (no Key Vault can run here: test/support/azure-keyvault/stand-in.ts says why),
// reached under the real host names over HTTPS with the stand-in's CA trusted. Each auth
// mode, each object type and output format, objectVersionHistory, and what the answers
// carry: files, modes, object ids and Key Vault's version ids.

const run = promisify(execFile);
const WI_CLIENT = '0a0a0a0a-0000-4000-8000-000000000001';
const SP_CLIENT = '0b0b0b0b-0000-4000-8000-000000000002';
const MI_CLIENT = '0c0c0c0c-0000-4000-8000-000000000003';

function files(res: MountResponse__Output): Record<string, string> {
  return Object.fromEntries(res.files.map((f) => [f.path, Buffer.from(f.contents).toString('utf8')]));
}

function versions(res: MountResponse__Output): Record<string, string> {
  return Object.fromEntries(res.object_version.map((v) => [v.id, v.version]));
}

describe('azure provider process: the real Azure SDK against the Key Vault + Entra stand-in', function () {
  this.timeout(120_000);
  let standIn: AzureStandIn;
  let vault: VaultStore;
  let provider: ProviderProcess;
  let wi: WorkloadIdentity;
  let chain: CertificateMaterial;
  let work: string;
  const versionOf: Record<string, string> = {};
  // Key Vault orders versions by their creation second: each new version is a second later.
  const clock = new ManualClock(Date.now());

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'ssc-azure-'));
    standIn = await startAzureStandIn({ clock });
    vault = standIn.vault('kv-apps');
    versionOf['db'] = vault.setSecret('db-password', 'hunter2');
    versionOf['hex'] = vault.setSecret('hex-value', Buffer.from('bytes!').toString('hex'));
    chain = await makeCertificateChain('rsa', 'web.example.test');
    versionOf['tls'] = await vault.importCertificate('web-tls', chain, 'application/x-pkcs12');
    versionOf['key'] = vault.createKey('signing', 'EC', { crv: 'P-256' });
    const federated = workloadIdentity(standIn, WI_CLIENT, 'apps/web');
    wi = federated;
    vault.grant(federated.principal, ['secrets', 'keys', 'certificates']);
    vault.grant(standIn.registerApp(SP_CLIENT, 'sp-secret-value'), ['secrets']);
    vault.grant(standIn.managedIdentity(MI_CLIENT), ['secrets']);
    provider = await startAzureProvider(standIn, ['--health-addr=127.0.0.1:0']);
  });
  after(async () => {
    await provider?.stop();
    await standIn?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const classFor = (objects: Record<string, string | number>[], extra: Record<string, string> = {}) => ({
    keyvaultName: 'kv-apps',
    tenantId: standIn.tenantId,
    objects: objectsParameter(objects),
    ...extra,
  });

  it('workload identity: a secret, a hex-encoded secret, a certificate as key-first PEM with its chain, the certificate, the public key', async () => {
    const res = await provider.mount({
      ...classFor(
        [
          { objectName: 'db-password', objectType: 'secret', filePermission: '0400' },
          { objectName: 'hex-value', objectType: 'secret', objectEncoding: 'hex', objectAlias: 'raw.bin' },
          { objectName: 'web-tls', objectType: 'secret', objectAlias: 'tls.pem' },
          { objectName: 'web-tls', objectType: 'cert', objectAlias: 'tls.crt' },
          { objectName: 'signing', objectType: 'key' },
        ],
        { clientID: WI_CLIENT },
      ),
      ...wi.attributes('web-0'),
    });
    const out = files(res);
    expect(out['db-password']).to.equal('hunter2');
    expect(res.files.find((f) => f.path === 'db-password')?.mode).to.equal(0o400);
    expect(out['raw.bin']).to.equal('bytes!');
    const pem = out['tls.pem'] ?? '';
    expect(pem.indexOf('-----BEGIN PRIVATE KEY-----')).to.equal(0);
    // Leaf → intermediate → root, each checked by openssl against the next.
    const certs = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g) ?? [];
    expect(certs.map((c) => c.replace(/\s/g, ''))).to.deep.equal(chain.certPems.map((c) => c.replace(/\s/g, '')));
    await writeFile(join(work, 'chain.pem'), certs.slice(1).join(''));
    await writeFile(join(work, 'root.pem'), certs[2] ?? '');
    await writeFile(join(work, 'leaf.pem'), certs[0] ?? '');
    const verified = await run('openssl', [
      'verify',
      '-CAfile',
      join(work, 'root.pem'),
      '-untrusted',
      join(work, 'chain.pem'),
      join(work, 'leaf.pem'),
    ]);
    expect(verified.stdout).to.include('leaf.pem: OK');
    expect(out['tls.crt']).to.equal(certs[0]);
    expect(out['signing']).to.match(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(versions(res)).to.deep.equal({
      'secret/db-password': versionOf['db'],
      'secret/hex-value': versionOf['hex'],
      'secret/web-tls': versionOf['tls'],
      'cert/web-tls': versionOf['tls'],
      'key/signing': versionOf['key'],
    });
    expect(versionOf['db']).to.match(/^[0-9a-f]{32}$/);
  });

  it('a certificate-backed secret as the PFX Key Vault stores (objectFormat pfx, objectEncoding base64): openssl reads it', async () => {
    const res = await provider.mount({
      ...classFor(
        [
          {
            objectName: 'web-tls',
            objectType: 'secret',
            objectFormat: 'pfx',
            objectEncoding: 'base64',
            objectAlias: 'tls.pfx',
          },
        ],
        { clientID: WI_CLIENT },
      ),
      ...wi.attributes(),
    });
    const pfx = res.files.find((f) => f.path === 'tls.pfx');
    await writeFile(join(work, 'tls.pfx'), pfx?.contents ?? Buffer.alloc(0));
    const info = await run('openssl', [
      'pkcs12',
      '-in',
      join(work, 'tls.pfx'),
      '-nokeys',
      '-passin',
      'pass:',
      '-legacy',
    ]);
    expect(info.stdout).to.include('BEGIN CERTIFICATE');
  });

  it('service principal from the nodePublishSecretRef (clientid/clientsecret)', async () => {
    const res = await provider.mount(
      { ...classFor([{ objectName: 'db-password', objectType: 'secret' }]), ...podAttributes('batch-0', 'apps/batch') },
      { secrets: { clientid: SP_CLIENT, clientsecret: 'sp-secret-value' } },
    );
    expect(files(res)).to.deep.equal({ 'db-password': 'hunter2' });
  });

  it("the node's user-assigned managed identity (useVMManagedIdentity, userAssignedIdentityID) through IMDS", async () => {
    const res = await provider.mount({
      ...classFor([{ objectName: 'db-password', objectType: 'secret' }], {
        useVMManagedIdentity: 'true',
        userAssignedIdentityID: MI_CLIENT,
      }),
      ...podAttributes('node-0', 'apps/node'),
    });
    expect(files(res)).to.deep.equal({ 'db-password': 'hunter2' });
  });

  it('objectVersionHistory: N writes the N latest versions as <name>/0 … <name>/N-1 with ids secret/<name>/<i>', async () => {
    const v1 = vault.setSecret('rotating', 'one');
    clock.advance(1);
    const v2 = vault.setSecret('rotating', 'two');
    clock.advance(1);
    const v3 = vault.setSecret('rotating', 'three');
    const res = await provider.mount({
      ...classFor([{ objectName: 'rotating', objectType: 'secret', objectVersionHistory: 2 }], { clientID: WI_CLIENT }),
      ...wi.attributes(),
    });
    expect(files(res)).to.deep.equal({ 'rotating/0': 'three', 'rotating/1': 'two' });
    expect(versions(res)).to.deep.equal({ 'secret/rotating/0': v3, 'secret/rotating/1': v2 });
    expect(v1).not.to.equal(v2);
  });
});
