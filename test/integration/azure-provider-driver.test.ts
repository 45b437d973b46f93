import { expect } from 'chai';
import { createPublicKey, X509Certificate } from 'node:crypto';
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { metadataFileName } from '../../driver/volume/metadata.js';
import { makeCertificateChain, type CertificateMaterial } from '../support/azure-keyvault/certificates.js';
import { ManualClock } from '../support/azure-keyvault/clock.js';
import type { RequestRecord } from '../support/azure-keyvault/request-log.js';
import { startAzureStandIn, type AzureStandIn } from '../support/azure-keyvault/stand-in.js';
import type { VaultStore } from '../support/azure-keyvault/vault-store.js';
import {
  AZURE_AUDIENCE,
  startAzureProvider,
  workloadIdentity,
  type WorkloadIdentity,
} from '../support/azure-provider.js';
import {
  driverLogSince,
  rotationRoundsSince,
  startDriverStack,
  whenDriverLogs,
  type DriverStack,
} from '../support/driver-stack.js';
import { parseMetrics, type ProviderProcess } from '../support/provider-process.js';
import { tokensAttribute } from '../support/service-account-tokens.js';

// The azure provider process behind our real driver process (local mode: classes from
// --spc-dir, tmpfs targets when root), with rotation on every second. Key Vault and Entra
// are the stand-in (test/support/azure-keyvault/stand-in.ts says why no real one can run
// here), reached by the real Azure SDK over HTTPS under the real host names. The pods use
// workload identity: kubelet's token for api://AzureADTokenExchange in the volume context.
// What is checked: the files and .metadata/ a publish writes; a new Key Vault version
// rotated in; unchanged rounds that rewrite nothing and read no value (the provider answers
// from version properties, the driver keeps the mounted files); ten pods of one identity
// costing about one Key Vault read per object per round; and a throttled vault or a
// deleted object during rotation keeping the old content whole.
// Waits are on events: each check runs again whenever the driver logs (it logs every
// rotation round), never after a guessed sleep.

const WI_CLIENT = '0d0d0d0d-0000-4000-8000-000000000004';
const VAULT = 'kv-driver';
/** The rotation call's deadline (--provider-timeout); the throttle below asks for more. */
const PROVIDER_TIMEOUT_S = 10;

/** An Azure class as Azure's provider documents it (usePodIdentity "false" included). */
function azureClass(name: string, tenantId: string, objects: readonly string[]): string {
  const entries = objects
    .map(
      (o) =>
        `        - |\n${o
          .trim()
          .split('\n')
          .map((l) => `          ${l.trim()}`)
          .join('\n')}`,
    )
    .join('\n');
  return `apiVersion: secrets-store.csi.x-k8s.io/v1
kind: SecretProviderClass
metadata:
  name: ${name}
spec:
  provider: azure
  parameters:
    usePodIdentity: "false"
    clientID: "${WI_CLIENT}"
    keyvaultName: "${VAULT}"
    tenantId: "${tenantId}"
    objects: |
      array:
${entries}
`;
}

interface VersionsJson {
  readonly objects: readonly { readonly id: string; readonly version: string }[];
}

describe('azure provider behind the real driver (local mode, rotation) against the Key Vault stand-in', function () {
  this.timeout(180_000);
  const clock = new ManualClock(Date.now());
  let standIn: AzureStandIn;
  let vault: VaultStore;
  let wi: WorkloadIdentity;
  let chain: CertificateMaterial;
  let stack: DriverStack;
  let provider: ProviderProcess;

  /** kubelet's NodePublishVolume for pod default/<pod> (service account default) with its workload identity token. */
  function publishRequest(target: string, spc: string, pod: string) {
    const request = stack.request(target, spc, pod);
    const token = wi.issuer.token('default/default', AZURE_AUDIENCE);
    return {
      ...request,
      volume_context: {
        ...request.volume_context,
        'csi.storage.k8s.io/serviceAccount.tokens': tokensAttribute(token, AZURE_AUDIENCE),
      },
    };
  }

  const driverLog = (since: number) => driverLogSince(stack, since);

  /** Rotation rounds the driver finished since `since`. */
  const roundsSince = (since: number) => rotationRoundsSince(stack, since);

  /** The driver's 'rotation refresh failed' line for `target` since `since`, if any. */
  const refreshFailure = (target: string, since: number) =>
    driverLog(since).find((e) => e['message'] === 'rotation refresh failed' && e['targetPath'] === target);

  const readVersions = async (target: string) =>
    JSON.parse(await readFile(join(target, '.metadata/versions.json'), 'utf8')) as VersionsJson;
  const versionOf = async (target: string, id: string) =>
    (await readVersions(target)).objects.find((o) => o.id === id)?.version;

  /** Key Vault requests in the stand-in's log for object `name` (path /<kind>/<name>/…). */
  const keyVaultRequests = (name?: string): RequestRecord[] =>
    standIn.requests().filter((r) => r.service === 'keyvault' && (name === undefined || r.path.split('/')[2] === name));
  const countOps = (records: readonly RequestRecord[], operation: string) =>
    records.filter((r) => r.operation === operation).length;

  /** Every path under `dir` (relative, sorted), symlinks not followed. */
  async function tree(dir: string, prefix = ''): Promise<string[]> {
    const out: string[] = [];
    for (const e of await readdir(dir, { withFileTypes: true })) {
      out.push(`${prefix}${e.name}`);
      if (e.isDirectory()) out.push(...(await tree(join(dir, e.name), `${prefix}${e.name}/`)));
    }
    return out.sort();
  }

  /** A sum of the metric samples named `name` whose labels include every one of `labels`. */
  function sample(metrics: Map<string, number>, name: string, ...labels: string[]): number {
    let sum = 0;
    for (const [key, value] of metrics) {
      if ((key === name || key.startsWith(`${name}{`)) && labels.every((l) => key.includes(l))) sum += value;
    }
    return sum;
  }

  before(async () => {
    standIn = await startAzureStandIn({ clock });
    vault = standIn.vault(VAULT);
    vault.setSecret('db-password', 'hunter2');
    chain = await makeCertificateChain('rsa', 'web.example.test');
    await vault.importCertificate('web-tls', chain, 'application/x-pkcs12');
    vault.createKey('signing', 'EC', { crv: 'P-256' });
    vault.setSecret('fleet-token', 'fleet-v1');
    vault.setSecret('alpha', 'alpha-v1');
    vault.setSecret('beta', 'beta-v1');
    const federated = workloadIdentity(standIn, WI_CLIENT, 'default/default');
    wi = federated;
    vault.grant(federated.principal, ['secrets', 'keys', 'certificates']);
    stack = await startDriverStack({
      classes: {
        'azure-app.yaml': azureClass('azure-app', standIn.tenantId, [
          'objectName: db-password\nobjectType: secret\nfilePermission: "0400"',
          'objectName: web-tls\nobjectType: cert\nobjectAlias: tls.crt',
          'objectName: signing\nobjectType: key',
        ]),
        'azure-fleet.yaml': azureClass('azure-fleet', standIn.tenantId, [
          'objectName: fleet-token\nobjectType: secret',
        ]),
        'azure-pair.yaml': azureClass('azure-pair', standIn.tenantId, [
          'objectName: alpha\nobjectType: secret',
          'objectName: beta\nobjectType: secret',
        ]),
      },
      // Info level: the driver's stderr tail (256 KiB) then holds the whole run's rounds.
      driverArgs: [
        '--enable-secret-rotation',
        '--rotation-poll-interval=1s',
        `--provider-timeout=${PROVIDER_TIMEOUT_S}s`,
        '--log-level=info',
      ],
    });
    provider = await startAzureProvider(standIn, ['--health-addr=127.0.0.1:0', '--read-cache-window=5s'], {
      providersDir: stack.providersDir,
    });
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
    await standIn?.close();
  });

  it("publish: each object's file with its bytes and mode, .metadata/ with ids <type>/<name> and Key Vault version ids", async () => {
    const target = stack.targetPath('app');
    await stack.client.publish(publishRequest(target, 'azure-app', 'app'));
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('hunter2');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    const cer = vault.versions('certificates', 'web-tls')?.at(-1)?.cer ?? Buffer.alloc(0);
    const crt = await readFile(join(target, 'tls.crt'), 'utf8');
    expect(crt).to.equal(new X509Certificate(cer).toString());
    expect(crt.replace(/\s/g, '')).to.equal(chain.certPems[0]?.replace(/\s/g, ''));
    expect((await stat(join(target, 'tls.crt'))).mode & 0o777).to.equal(0o644);
    const jwk = vault.versions('keys', 'signing')?.at(-1)?.jwk;
    const spki = createPublicKey({ key: { kty: 'EC', crv: jwk?.crv, x: jwk?.x, y: jwk?.y }, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    expect(await readFile(join(target, 'signing'), 'utf8')).to.equal(spki);
    expect((await stat(join(target, 'signing'))).mode & 0o777).to.equal(0o644);

    const latest = (kind: 'secrets' | 'keys' | 'certificates', name: string) =>
      vault.versions(kind, name)?.at(-1)?.version;
    const expected = [
      { id: 'cert/web-tls', version: latest('certificates', 'web-tls') },
      { id: 'key/signing', version: latest('keys', 'signing') },
      { id: 'secret/db-password', version: latest('secrets', 'db-password') },
    ];
    expect((await readVersions(target)).objects).to.deep.equal(expected);
    for (const { id, version } of expected) {
      expect(version).to.match(/^[0-9a-f]{32}$/);
      expect(await readFile(join(target, '.metadata', metadataFileName(id)), 'utf8')).to.equal(version);
    }
    expect(await tree(target)).to.include.members(['.metadata', 'db-password', 'tls.crt', 'signing']);
  });

  it('a new Key Vault version is rotated in without a republish: new bytes, new version id, nothing else changed', async () => {
    const target = stack.targetPath('app');
    const before = await readVersions(target);
    clock.advance(1); // Key Vault orders versions by their creation second
    const v2 = vault.setSecret('db-password', 'correct horse battery staple');
    await whenDriverLogs(
      stack,
      "the rotation to write db-password's new version",
      async () => (await versionOf(target, 'secret/db-password')) === v2,
    );
    expect(await readFile(join(target, 'db-password'), 'utf8')).to.equal('correct horse battery staple');
    expect((await stat(join(target, 'db-password'))).mode & 0o777).to.equal(0o400);
    expect(await readFile(join(target, '.metadata', metadataFileName('secret/db-password')), 'utf8')).to.equal(v2);
    const after = await readVersions(target);
    expect(after.objects.filter((o) => o.id !== 'secret/db-password')).to.deep.equal(
      before.objects.filter((o) => o.id !== 'secret/db-password'),
    );
    expect(driverLog(0).some((e) => e['message'] === 'volume rotated' && e['targetPath'] === target)).to.equal(true);
  });

  it('unchanged rounds rewrite nothing and read no value: Key Vault sees only version listings', async () => {
    const target = stack.targetPath('app');
    const data = await readlink(join(target, '..data'));
    const file = await stat(join(target, 'db-password'));
    const versionsJson = await readFile(join(target, '.metadata/versions.json'));
    const versionsStat = await stat(join(target, '.metadata/versions.json'));
    const unchangedBefore = sample(
      parseMetrics(await stack.metrics()),
      'rotation_reconcile_total',
      'provider="azure"',
      'rotated="false"',
    );
    standIn.clearRequests();
    const since = Date.now();
    // Until every object was listed afresh (the read window is 5 s) over at least three rounds.
    await whenDriverLogs(
      stack,
      'rounds that list every object',
      () =>
        roundsSince(since) >= 3 &&
        ['db-password', 'web-tls', 'signing'].every((name) => keyVaultRequests(name).length > 0),
    );
    const ops = new Set(keyVaultRequests().map((r) => r.operation));
    expect([...ops].sort()).to.deep.equal(['getCertificateVersions', 'getKeyVersions', 'getSecretVersions']);
    expect(keyVaultRequests().every((r) => r.status === 200)).to.equal(true);
    expect(await readlink(join(target, '..data'))).to.equal(data);
    const fileNow = await stat(join(target, 'db-password'));
    expect([fileNow.ino, fileNow.mtimeMs]).to.deep.equal([file.ino, file.mtimeMs]);
    expect(await readFile(join(target, '.metadata/versions.json'))).to.deep.equal(versionsJson);
    const versionsNow = await stat(join(target, '.metadata/versions.json'));
    expect([versionsNow.ino, versionsNow.mtimeMs]).to.deep.equal([versionsStat.ino, versionsStat.mtimeMs]);
    // The rounds did reach the provider: counted as refreshes that rotated nothing.
    expect(
      sample(parseMetrics(await stack.metrics()), 'rotation_reconcile_total', 'provider="azure"', 'rotated="false"'),
    ).to.be.greaterThan(unchangedBefore);
    await stack.client.unpublish('vol-app', target);
  });

  it('ten pods of one workload identity: about one Key Vault read per object per round, not one per pod', async () => {
    const pods = Array.from({ length: 10 }, (_, i) => `fleet-${i}`);
    const targets = pods.map((p) => stack.targetPath(p));
    standIn.clearRequests();
    await Promise.all(pods.map((p, i) => stack.client.publish(publishRequest(targets[i] as string, 'azure-fleet', p))));
    for (const t of targets) expect(await readFile(join(t, 'fleet-token'), 'utf8')).to.equal('fleet-v1');
    // Ten first mounts at once: one value read, the others joined it or reused it.
    expect(countOps(keyVaultRequests('fleet-token'), 'getSecret')).to.equal(1);

    const providerBefore = await provider.metrics();
    standIn.clearRequests();
    const since = Date.now();
    clock.advance(1);
    const v2 = vault.setSecret('fleet-token', 'fleet-v2');
    await whenDriverLogs(stack, "all ten volumes to rotate to fleet-token's new version", async () => {
      for (const t of targets) if ((await versionOf(t, 'secret/fleet-token')) !== v2) return false;
      return true;
    });
    for (const t of targets) expect(await readFile(join(t, 'fleet-token'), 'utf8')).to.equal('fleet-v2');
    const providerAfter = await provider.metrics();
    const rounds = roundsSince(since);
    const requests = keyVaultRequests('fleet-token');
    const lists = countOps(requests, 'getSecretVersions');
    const gets = countOps(requests, 'getSecret');
    const delta = (name: string, ...labels: string[]) =>
      sample(providerAfter, name, ...labels) - sample(providerBefore, name, ...labels);
    const mounts = delta('provider_mount_total', 'provider="azure"', 'result="success"');
    // Every Mount of the phase listed the object's versions once; the ten that rotated read its value once each.
    expect(mounts).to.be.at.least(targets.length);
    expect(gets, 'value reads of the new version').to.equal(1);
    expect(requests.filter((r) => r.operation === 'getSecret').map((r) => r.path)).to.deep.equal([
      `/secrets/fleet-token/${v2}`,
    ]);
    expect(lists, `version listings over ${rounds} rounds and ${mounts} Mounts`).to.be.within(1, rounds + 1);
    expect(mounts, 'Mounts of ten volumes').to.be.greaterThan(lists + gets);
    // The provider's own count agrees: each request sent was a miss, everything else came from the window.
    const sent = delta('azure_read_cache_total', 'result="miss"');
    const shared =
      delta('azure_read_cache_total', 'result="hit"') + delta('azure_read_cache_total', 'result="coalesced"');
    expect(sent).to.equal(lists + gets);
    expect(sent + shared).to.equal(mounts + targets.length);
    expect(delta('azure_keyvault_requests_total', 'operation="get_secret"')).to.equal(gets);
    expect(delta('azure_keyvault_requests_total', 'operation="list_secret_versions"')).to.equal(lists);
    await Promise.all(pods.map((p, i) => stack.client.unpublish(`vol-${p}`, targets[i] as string)));
  });

  it("Key Vault throttling past the rotation call's deadline: content kept whole, the failure reported, the next round catches up", async () => {
    const target = stack.targetPath('pair');
    await stack.client.publish(publishRequest(target, 'azure-pair', 'pair'));
    const files = await tree(target);
    const data = await readlink(join(target, '..data'));
    const versionsJson = await readFile(join(target, '.metadata/versions.json'));
    const retryAfter = PROVIDER_TIMEOUT_S * 3;
    standIn.throttle(1_000_000, retryAfter);
    standIn.clearRequests();
    const since = Date.now();
    clock.advance(1);
    const alpha2 = vault.setSecret('alpha', 'alpha-v2');
    const failure = await whenDriverLogs(stack, 'a failed rotation of the pair volume', () =>
      refreshFailure(target, since),
    );
    standIn.throttle(0, 0);
    const failedAt = Date.parse(String(failure['timestamp']));
    const throttled = keyVaultRequests().filter((r) => r.operation === 'throttled' && r.at <= failedAt);
    // The provider read Retry-After and gave up at once instead of waiting past the deadline,
    // and the driver did not call again: one Mount's listings (alpha, beta), not three Mounts'
    // (the driver retries a provider's UNAVAILABLE; a throttled vault answers RESOURCE_EXHAUSTED).
    expect(throttled.length).to.be.within(1, 2);
    expect(failedAt - (throttled[0]?.at ?? 0)).to.be.below((PROVIDER_TIMEOUT_S * 1000) / 2);
    expect(String(failure['error'])).to.match(
      new RegExp(
        `^failed to publish volume vol-pair .*: provider "azure" Mount failed: azure provider: key vault throttled secret "(alpha|beta)" and asked to wait ${retryAfter}s, more than the [0-9.]+s left before the Mount's deadline$`,
      ),
    );
    expect(failure['reason']).to.equal('GRPCProviderError');
    const errors = sample(
      parseMetrics(await stack.metrics()),
      'rotation_reconcile_error_total',
      'provider="azure"',
      `error_type="${String(failure['reason'])}"`,
    );
    expect(errors).to.be.greaterThan(0);
    // Nothing written: the same files, the same ..data, the old value and versions.
    expect(await tree(target)).to.deep.equal(files);
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect(await readFile(join(target, 'alpha'), 'utf8')).to.equal('alpha-v1');
    expect(await readFile(join(target, '.metadata/versions.json'))).to.deep.equal(versionsJson);
    // Throttling over, a later round writes the new version (after the failure backoff).
    await whenDriverLogs(
      stack,
      "the pair volume to rotate to alpha's new version",
      async () => (await versionOf(target, 'secret/alpha')) === alpha2,
    );
    expect(await readFile(join(target, 'alpha'), 'utf8')).to.equal('alpha-v2');
  });

  it('an object deleted from Key Vault during rotation: the failure names it, no file is rewritten, not even the one that changed', async () => {
    const target = stack.targetPath('pair');
    await whenDriverLogs(
      stack,
      'the pair volume at alpha-v2',
      async () => (await readFile(join(target, 'alpha'), 'utf8')) === 'alpha-v2',
    );
    const files = await tree(target);
    const data = await readlink(join(target, '..data'));
    const versionsJson = await readFile(join(target, '.metadata/versions.json'));
    const since = Date.now();
    clock.advance(1);
    vault.setSecret('alpha', 'alpha-v3');
    vault.delete('secrets', 'beta');
    const failure = await whenDriverLogs(stack, 'a failed rotation of the pair volume', () =>
      refreshFailure(target, since),
    );
    expect(String(failure['error'])).to.match(
      new RegExp(
        `provider "azure" Mount failed: azure provider: secret "beta" in key vault "${VAULT}" not found \\(HTTP 404, SecretNotFound\\)`,
      ),
    );
    expect(failure['reason']).to.equal('GRPCProviderError');
    expect(
      sample(
        parseMetrics(await stack.metrics()),
        'rotation_reconcile_error_total',
        'provider="azure"',
        `error_type="${String(failure['reason'])}"`,
      ),
    ).to.be.greaterThan(0);
    expect(await tree(target)).to.deep.equal(files);
    expect(await readlink(join(target, '..data'))).to.equal(data);
    expect(await readFile(join(target, 'alpha'), 'utf8')).to.equal('alpha-v2');
    expect(await readFile(join(target, 'beta'), 'utf8')).to.equal('beta-v1');
    expect(await readFile(join(target, '.metadata/versions.json'))).to.deep.equal(versionsJson);
    await stack.client.unpublish('vol-pair', target);
  });
});
