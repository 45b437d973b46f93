import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderClient } from '../../driver/provider-client/client.js';
import { SscError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logging/logger.js';
import { realSleep } from '../../lib/sleep.js';
import { openBaoUnavailable, startOpenBao, type OpenBao } from '../support/openbao.js';
import {
  enableJwtAuth,
  podAttributes,
  startVaultProvider,
  type JwtAuth,
  type VaultProviderProcess,
} from '../support/vault-provider.js';

// A throttling vault, end to end: a real OpenBao with a rate-limit quota on the KV mount
// answers 429 with Retry-After; the real vault provider turns it into RESOURCE_EXHAUSTED
// (`VaultThrottled`) with the wait as gRPC's `grpc-retry-pushback-ms` trailer; the driver's
// own provider client reads it back as the error's retryAfterMs, which rotation's backoff
// per class and service account honours (driver/rotation/class-backoff.ts).

describe('a throttling vault: 429 → RESOURCE_EXHAUSTED with grpc-retry-pushback-ms (real OpenBao, vault provider, driver client)', function () {
  this.timeout(120_000);
  let bao: OpenBao;
  let jwt: JwtAuth;
  let provider: VaultProviderProcess;
  let client: ProviderClient;
  let work: string;

  const attrs = (secret: string): Record<string, string> => ({
    roleName: 'app',
    vaultAddress: bao.address,
    vaultAuthMountPath: jwt.mount,
    objects: `- {objectName: p, secretPath: secret/app/${secret}, secretKey: password}\n`,
    ...podAttributes(),
    'csi.storage.k8s.io/serviceAccount.tokens': jwt.tokensAttribute(jwt.token()),
  });
  const mount = (secret: string) =>
    client.mount('vault', {
      attributes: JSON.stringify(attrs(secret)),
      secrets: '{}',
      target_path: join(work, 'target'),
      permission: '420',
      current_object_version: [],
    });

  before(async function () {
    const unavailable = openBaoUnavailable();
    if (unavailable) {
      process.stderr.write(`    skipping the throttling vault test: ${unavailable}\n`);
      this.skip();
    }
    work = await mkdtemp(join(tmpdir(), 'ssc-throttle-'));
    bao = await startOpenBao();
    await bao.putPolicy('app', 'path "secret/data/app/*" { capabilities = ["read"] }');
    jwt = await enableJwtAuth(bao, 'jwt', { app: ['app'] });
    for (const s of ['a', 'b']) await bao.write(`secret/data/app/${s}`, { data: { password: `value-${s}` } });
    // One request a minute on the KV mount, with Retry-After on the 429s.
    await bao.write('sys/quotas/config', { enable_rate_limit_response_headers: true });
    await bao.write('sys/quotas/rate-limit/kv', { path: 'secret/', rate: 1, interval: '60s' });
    provider = await startVaultProvider();
    client = new ProviderClient({
      providerDirs: [provider.providersDir],
      maxCallRecvMsgSize: 4 << 20,
      timeoutMs: 20_000,
      sleep: realSleep,
      logger: createLogger({ component: 'test', silent: true }),
    });
  });
  after(async () => {
    client?.close();
    await provider?.stop();
    await bao?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('the second read in the minute fails RESOURCE_EXHAUSTED, naming the throttling and carrying the wait Vault asked for', async () => {
    const first = await mount('a');
    expect(first.files.map((f) => f.path)).to.deep.equal(['p']);
    const err = await mount('b').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(SscError);
    const e = err as SscError;
    expect(e.kind).to.equal('resource-exhausted');
    expect(e.message).to.match(/throttled read "secret\/data\/app\/b" \(HTTP 429\); it asked to wait \d+s/);
    expect(e.message).to.not.include('value-');
    expect(e.retryAfterMs, 'grpc-retry-pushback-ms from Retry-After').to.be.within(1_000, 60_000);
  });
});
