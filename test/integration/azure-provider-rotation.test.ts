import { expect } from 'chai';
import { ManualClock } from '../support/azure-keyvault/clock.js';
import type { RequestRecord } from '../support/azure-keyvault/request-log.js';
import { startAzureStandIn, type AzureStandIn } from '../support/azure-keyvault/stand-in.js';
import type { VaultStore } from '../support/azure-keyvault/vault-store.js';
import {
  objectsParameter,
  startAzureProvider,
  workloadIdentity,
  type WorkloadIdentity,
} from '../support/azure-provider.js';
import { podAttributes, type ProviderProcess } from '../support/provider-process.js';

// The azure provider's rotation and load behaviour against the Key Vault + Entra stand-in
// (test/support/azure-keyvault/), counted in the stand-in's request log: a rotation with
// nothing new answers from version properties (no value read), a pinned version costs no
// request, many Mounts of one identity share one token and one read, and Key Vault's
// failures (404, 403, Entra refusals, 429 with Retry-After, an unknown vault) come back
// as gRPC codes that name the object, vault and identity kind, never a value or token.

const WI_CLIENT = '1a1a1a1a-0000-4000-8000-000000000001';
const SP_CLIENT = '1b1b1b1b-0000-4000-8000-000000000002';
const VALUE_READS = new Set(['getSecret', 'getKey', 'getCertificate']);
const LISTS = new Set(['getSecretVersions', 'getKeyVersions', 'getCertificateVersions']);

/** Key Vault requests answered 200 in `records`, by kind: value reads and version listings. */
function counts(records: readonly RequestRecord[]): { reads: number; lists: number } {
  const ok = records.filter((r) => r.service === 'keyvault' && r.status === 200);
  return {
    reads: ok.filter((r) => VALUE_READS.has(r.operation)).length,
    lists: ok.filter((r) => LISTS.has(r.operation)).length,
  };
}

describe('azure provider rotation, load and errors against the Key Vault + Entra stand-in', function () {
  this.timeout(120_000);
  const clock = new ManualClock(Date.now());
  let standIn: AzureStandIn;
  let vault: VaultStore;
  let wi: WorkloadIdentity;
  /** Reads not shared across Mounts (--read-cache-window=0), so each Mount's requests can be counted. */
  let unshared: ProviderProcess;
  /** The default 5 s read window. */
  let shared: ProviderProcess;
  const OBJECTS = objectsParameter([
    { objectName: 'db-password', objectType: 'secret' },
    { objectName: 'api-key', objectType: 'secret' },
  ]);

  before(async () => {
    standIn = await startAzureStandIn({ clock });
    vault = standIn.vault('kv-rotate');
    vault.setSecret('db-password', 'hunter2');
    vault.setSecret('api-key', 'k-1');
    const federated = workloadIdentity(standIn, WI_CLIENT, 'apps/web');
    wi = federated;
    vault.grant(federated.principal, ['secrets']);
    standIn.registerApp(SP_CLIENT, 'right-secret');
    standIn.vault('kv-other');
    unshared = await startAzureProvider(standIn, ['--read-cache-window=0']);
    shared = await startAzureProvider(standIn, ['--health-addr=127.0.0.1:0']);
  });
  after(async () => {
    await unshared?.stop();
    await shared?.stop();
    await standIn?.close();
  });

  const attributes = (extra: Record<string, string> = {}) => ({
    keyvaultName: 'kv-rotate',
    tenantId: standIn.tenantId,
    clientID: WI_CLIENT,
    objects: OBJECTS,
    ...wi.attributes(),
    ...extra,
  });

  it('a rotation with nothing new answers from version properties: versions, no files, no value read', async () => {
    const first = await unshared.mount(attributes());
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    standIn.clearRequests();
    const again = await unshared.mount(attributes(), { current });
    expect(again.files).to.deep.equal([]);
    expect(Object.fromEntries(again.object_version.map((v) => [v.id, v.version]))).to.deep.equal(current);
    expect(counts(standIn.requests())).to.deep.equal({ reads: 0, lists: 2 });
  });

  it('a new version: the next rotation reads every value again and reports the new version', async () => {
    const first = await unshared.mount(attributes());
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    clock.advance(1);
    const v2 = vault.setSecret('api-key', 'k-2');
    standIn.clearRequests();
    const rotated = await unshared.mount(attributes(), { current });
    expect(Object.fromEntries(rotated.files.map((f) => [f.path, Buffer.from(f.contents).toString()]))).to.deep.equal({
      'db-password': 'hunter2',
      'api-key': 'k-2',
    });
    expect(rotated.object_version.find((v) => v.id === 'secret/api-key')?.version).to.equal(v2);
    expect(counts(standIn.requests())).to.deep.equal({ reads: 2, lists: 2 });
  });

  it('a pinned objectVersion that is mounted costs no request at all', async () => {
    const pinned = vault.versions('secrets', 'db-password')?.[0]?.version as string;
    const objects = objectsParameter([{ objectName: 'db-password', objectType: 'secret', objectVersion: pinned }]);
    await unshared.mount(attributes({ objects }));
    standIn.clearRequests();
    const res = await unshared.mount(attributes({ objects }), { current: { 'secret/db-password': pinned } });
    expect(res.files).to.deep.equal([]);
    expect(standIn.requests().filter((r) => r.service === 'keyvault')).to.deep.equal([]);
  });

  it('an edited class (alias, encoding, mode) is read and written anew, though no version changed', async () => {
    const target = { targetPath: '/var/lib/kubelet/pods/edited/volumes/v' };
    const first = await unshared.mount(attributes(), target);
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    const edited = objectsParameter([
      { objectName: 'db-password', objectType: 'secret', objectAlias: 'DB_PASSWORD', filePermission: '0400' },
      { objectName: 'api-key', objectType: 'secret' },
    ]);
    const res = await unshared.mount(attributes({ objects: edited }), { ...target, current });
    expect(res.files.map((f) => [f.path, f.mode])).to.deep.equal([
      ['DB_PASSWORD', 0o400],
      ['api-key', 0o644],
    ]);
  });

  it("an identity that may only get (Azure's documented access policy): rotations read the value, and stop asking to list", async () => {
    const getOnly = workloadIdentity(standIn, '1c1c1c1c-0000-4000-8000-000000000003', 'apps/getonly');
    vault.grant(getOnly.principal, ['secrets'], ['get']);
    const attrs = { ...attributes(), clientID: getOnly.clientId, ...getOnly.attributes('getonly-0') };
    const first = await unshared.mount(attrs);
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    standIn.clearRequests();
    for (let round = 0; round < 3; round++) {
      const res = await unshared.mount({ ...attrs, ...getOnly.attributes('getonly-0') }, { current });
      expect(res.files.length).to.equal(2);
    }
    const log = standIn.requests().filter((r) => r.service === 'keyvault' && r.authorized);
    expect(log.filter((r) => LISTS.has(r.operation)).map((r) => r.status)).to.deep.equal([403, 403]);
    expect(counts(log)).to.deep.equal({ reads: 6, lists: 0 });
  });

  it('an object with hundreds of versions: a rotation stops listing after a few pages and reads the value', async () => {
    for (let i = 0; i < 130; i++) vault.setSecret('busy', `v-${i}`);
    const objects = objectsParameter([{ objectName: 'busy', objectType: 'secret' }]);
    const first = await unshared.mount(attributes({ objects }));
    const current = Object.fromEntries(first.object_version.map((v) => [v.id, v.version]));
    standIn.clearRequests();
    const res = await unshared.mount(attributes({ objects }), { current });
    expect(Buffer.from(res.files[0]?.contents ?? []).toString()).to.equal('v-129');
    const { reads, lists } = counts(standIn.requests());
    expect(reads).to.equal(1);
    expect(lists).to.be.at.most(5);
  });

  it('20 Mounts of one identity at once: one Entra token, one read per object (read window and coalescing)', async () => {
    clock.advance(1);
    vault.setSecret('db-password', 'fresh');
    standIn.clearRequests();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => shared.mount({ ...attributes(), ...wi.attributes(`web-${i}`) })),
    );
    for (const r of results)
      expect(Buffer.from(r.files.find((f) => f.path === 'db-password')?.contents ?? []).toString()).to.equal('fresh');
    const log = standIn.requests();
    expect(log.filter((r) => r.service === 'entra' && r.operation === 'token').length).to.equal(1);
    expect(counts(log)).to.deep.equal({ reads: 2, lists: 0 });
    const metrics = await shared.metrics();
    expect(metrics.get('azure_read_cache_total{result="miss"}')).to.equal(2);
    expect(
      (metrics.get('azure_read_cache_total{result="hit"}') ?? 0) +
        (metrics.get('azure_read_cache_total{result="coalesced"}') ?? 0),
    ).to.equal(38);
  });

  it('another identity never gets a read the first one made: a service principal without access is refused right after', async () => {
    await shared.mount(attributes());
    const failure = await shared.mountError(
      {
        keyvaultName: 'kv-rotate',
        tenantId: standIn.tenantId,
        objects: OBJECTS,
        ...podAttributes('batch-0', 'apps/batch'),
      },
      { secrets: { clientid: SP_CLIENT, clientsecret: 'right-secret' } },
    );
    expect(failure.code).to.equal('PERMISSION_DENIED');
    expect(failure.details).to.include('refused the service principal').and.include('HTTP 403');
  });

  describe('errors', () => {
    const noValues = (text: string) => {
      for (const leaked of ['hunter2', 'k-1', 'k-2', 'right-secret', 'wrong-secret', 'eyJ'])
        expect(text).not.to.include(leaked);
    };

    it('an object missing: NOT_FOUND naming the object and the vault', async () => {
      const f = await unshared.mountError(
        attributes({ objects: objectsParameter([{ objectName: 'db-pasword', objectType: 'secret' }]) }),
      );
      expect(f.code).to.equal('NOT_FOUND');
      expect(f.details)
        .to.include('secret "db-pasword"')
        .and.include('key vault "kv-rotate"')
        .and.include('SecretNotFound');
      noValues(f.details);
    });

    it('a wrong client secret: PERMISSION_DENIED naming the identity kind and the AADSTS code', async () => {
      const f = await unshared.mountError(
        {
          keyvaultName: 'kv-rotate',
          tenantId: standIn.tenantId,
          objects: OBJECTS,
          ...podAttributes('batch-0', 'apps/batch'),
        },
        { secrets: { clientid: SP_CLIENT, clientsecret: 'wrong-secret' } },
      );
      expect(f.code).to.equal('PERMISSION_DENIED');
      expect(f.details).to.include('refused the service principal').and.include('AADSTS7000215');
      noValues(f.details);
    });

    it('a service account without a federated credential: PERMISSION_DENIED (AADSTS70021), never the token', async () => {
      const f = await unshared.mountError({ ...attributes(), ...wi.attributes('other-0', 'apps/other') });
      expect(f.code).to.equal('PERMISSION_DENIED');
      expect(f.details).to.include('refused the workload identity').and.include('AADSTS70021');
      noValues(f.details);
    });

    it('a vault no DNS knows: UNAVAILABLE naming the vault', async () => {
      const f = await unshared.mountError(attributes({ keyvaultName: 'kv-nowhere' }));
      expect(f.code).to.equal('UNAVAILABLE');
      expect(f.details).to.include('key vault "kv-nowhere" is unreachable');
    });

    it('429 with a Retry-After that fits before the deadline: waited out, then served', async () => {
      standIn.throttle(1, 1);
      const started = Date.now();
      const res = await unshared.mount(attributes(), { deadlineMs: 20_000 });
      expect(res.files.length).to.equal(2);
      expect(Date.now() - started).to.be.greaterThanOrEqual(900);
    });

    it('429 with a Retry-After past the deadline: RESOURCE_EXHAUSTED at once (not UNAVAILABLE, which the driver retries), saying how long Key Vault asked to wait', async () => {
      standIn.throttle(1, 60);
      const started = Date.now();
      const f = await unshared.mountError(attributes(), { deadlineMs: 5_000 });
      expect(Date.now() - started).to.be.lessThan(4_000);
      expect(f.code).to.equal('RESOURCE_EXHAUSTED');
      expect(f.details).to.include('asked to wait 60s');
      standIn.throttle(0, 0);
    });

    it('nothing secret reached the provider logs', () => {
      for (const p of [unshared, shared]) {
        const log = p.child.stderr();
        // Values, client secrets, and any JWT (tokens start with the base64 of '{"').
        noValues(log);
        expect(log).to.include('provider started');
      }
    });
  });
});
